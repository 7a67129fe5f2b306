package io.fencekeeper.testing.plugins;

/** Claims to honour the deadline, and commits after it. */
public class LateCommittingPlugin extends LedgerPlugin {
  public LateCommittingPlugin() {
    honoursDeadline = false;
  }
}

package io.fencekeeper.testing.plugins;

/** Claims to fence, and accepts any token. */
public class UnfencedPlugin extends LedgerPlugin {
  public UnfencedPlugin() {
    fences = false;
  }
}

package io.fencekeeper.testing.plugins;

/** Its lookup finds nothing, whatever was applied. */
public class ForgetfulLookupPlugin extends LedgerPlugin {
  public ForgetfulLookupPlugin() {
    looksUp = false;
  }
}

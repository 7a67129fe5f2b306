package io.fencekeeper.testing.plugins;

/** Claims to keep keys, and applies a repeated key again. */
public class TwiceApplyingPlugin extends LedgerPlugin {
  public TwiceApplyingPlugin() {
    keepsKeys = false;
  }
}

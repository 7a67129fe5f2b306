package io.fencekeeper.testing.plugins;

import io.fencekeeper.sdk.provider.Guarantees;

/** Declares no guarantees at all: null, which the contract forbids. */
public class NullGuaranteesPlugin extends LedgerPlugin {
  @Override
  public Guarantees guarantees() {
    return null;
  }
}

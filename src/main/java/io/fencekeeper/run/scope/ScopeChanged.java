package io.fencekeeper.run.scope;

/**
 * A staging that goes on after a fault re-reads its scope up to where it had come, and found that
 * part of it not the same as before (a file replaced, a query whose rows changed): what was staged
 * no longer belongs to this scope, and staging starts over from the first row. Never shown to a
 * client as such: the caller starts over.
 */
public final class ScopeChanged extends ScopeException {

  ScopeChanged(String source, long accounts) {
    super(
        source
            + " is not the same as when its first "
            + accounts
            + " accounts were staged: staging starts over");
  }
}

package io.fencekeeper.run.scope;

/** The scope has more accounts than {@code fencekeeper.max-items-per-run} allows. */
public final class ScopeTooLarge extends ScopeException {

  private final long limit;

  ScopeTooLarge(String source, long limit) {
    super(
        source
            + " has more than "
            + limit
            + " accounts, the limit of a run (fencekeeper.max-items-per-run)");
    this.limit = limit;
  }

  public long limit() {
    return limit;
  }
}

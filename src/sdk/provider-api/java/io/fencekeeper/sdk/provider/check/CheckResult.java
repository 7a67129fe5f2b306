package io.fencekeeper.sdk.provider.check;

/**
 * One guarantee's line of the report.
 *
 * @param detail what was done and seen, in a sentence: keys, effect ids, answers
 */
public record CheckResult(Guarantee guarantee, boolean claimed, Verdict verdict, String detail) {

  /** What Fencekeeper can promise with this provider, as far as this guarantee goes. */
  public String promise() {
    return switch (verdict) {
      case HOLDS -> guarantee.promise();
      case NOT_OBSERVED -> "not seen: " + guarantee.promise();
      case BROKEN, NOT_CLAIMED -> guarantee.withoutIt();
      case INCONCLUSIVE -> "unknown: " + guarantee.withoutIt();
    };
  }
}

package io.fencekeeper.verify;

/**
 * What a verification concluded about one item, comparing its journal with the provider's answer to
 * a lookup of its idempotency key (docs/design.md, "Verifying a run").
 */
public enum Outcome {
  /** The provider says what the journal says. */
  AGREE,
  /** The journal recorded an effect; the provider has none under the key (404). */
  MISSING,
  /** The journal recorded an effect; the provider has another one under the key. */
  DIFFERENT,
  /** The journal recorded no effect (or nothing to do); the provider has one under the key. */
  UNEXPECTED_EFFECT,
  /** The journal left the effect AMBIGUOUS; the provider's answer settles it (applied or none). */
  RESOLVED;

  /** Whether the journal and the provider disagree: what an operator must act on. */
  public boolean discrepancy() {
    return this == MISSING || this == DIFFERENT || this == UNEXPECTED_EFFECT;
  }
}

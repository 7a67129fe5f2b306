package io.fencekeeper.sdk.provider.check;

/** What the check found for one guarantee. */
public enum Verdict {
  /** Claimed, and shown to hold. */
  HOLDS,
  /** Claimed, and shown not to hold. */
  BROKEN,
  /** Claimed, and it could not be shown either way (the provider gave no clear answer). */
  INCONCLUSIVE,
  /** Not claimed by the provider: not probed, so no real effect was spent on it. */
  NOT_CLAIMED,
  /** Nothing happened that would show it (the provider never throttled). */
  NOT_OBSERVED
}

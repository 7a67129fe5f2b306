package io.fencekeeper.provider.sim;

/**
 * The simulated provider's fault knobs (docs/design.md, "The provider boundary"). Settable at
 * start-up ({@code sim-provider} flags) and at run time ({@code PUT /admin/faults}); the JSON field
 * names are the record's component names.
 *
 * @param latencyMs added to every {@code /v1} request before it is processed
 * @param jitterMs a uniformly random extra delay in {@code [0, jitterMs]}
 * @param timeoutAfterAccept probability that a cleanup is applied and then answered with nothing
 * @param holdAfterAcceptMs for such a cleanup: 0 drops the connection at once; more holds it open
 *     without an answer for that long (past the client's timeout) and then drops it
 * @param throttlePerSecond token-bucket rate for {@code /v1} requests; 0 means unlimited
 * @param errorRate probability of a 5xx; on a cleanup, half of them come after applying it
 * @param nonIdempotent no deduplication by key: a repeat applies again (the key is still recorded
 *     as the caller's reference, so lookup finds it)
 * @param ignoreFencing accept any Fencing-Token instead of refusing one lower than seen
 * @param throttleShare probability that a {@code /v1} request is answered 429 at random, whatever
 *     the load (a provider's noise, not a limit), with a Retry-After of {@link
 *     #RANDOM_THROTTLE_WAIT_MS}
 */
public record SimFaults(
    long latencyMs,
    long jitterMs,
    double timeoutAfterAccept,
    long holdAfterAcceptMs,
    double throttlePerSecond,
    double errorRate,
    boolean nonIdempotent,
    boolean ignoreFencing,
    double throttleShare) {

  public static final SimFaults NONE = new SimFaults(0, 0, 0, 0, 0, 0, false, false, 0);

  /** The Retry-After-Ms of a 429 of {@code throttleShare} (its Retry-After rounds it up: 1 s). */
  public static final long RANDOM_THROTTLE_WAIT_MS = 100;

  /** The knobs without random throttling. */
  public SimFaults(
      long latencyMs,
      long jitterMs,
      double timeoutAfterAccept,
      long holdAfterAcceptMs,
      double throttlePerSecond,
      double errorRate,
      boolean nonIdempotent,
      boolean ignoreFencing) {
    this(
        latencyMs,
        jitterMs,
        timeoutAfterAccept,
        holdAfterAcceptMs,
        throttlePerSecond,
        errorRate,
        nonIdempotent,
        ignoreFencing,
        0);
  }

  public SimFaults {
    requireNonNegative("latencyMs", latencyMs);
    requireNonNegative("jitterMs", jitterMs);
    requireProbability("timeoutAfterAccept", timeoutAfterAccept);
    requireNonNegative("holdAfterAcceptMs", holdAfterAcceptMs);
    if (!(throttlePerSecond >= 0) || Double.isInfinite(throttlePerSecond)) {
      throw new IllegalArgumentException(
          "throttlePerSecond must be a finite number >= 0 (0 = unlimited), got "
              + throttlePerSecond);
    }
    requireProbability("errorRate", errorRate);
    requireProbability("throttleShare", throttleShare);
  }

  public SimFaults withLatency(long latencyMs, long jitterMs) {
    return new SimFaults(
        latencyMs,
        jitterMs,
        timeoutAfterAccept,
        holdAfterAcceptMs,
        throttlePerSecond,
        errorRate,
        nonIdempotent,
        ignoreFencing,
        throttleShare);
  }

  public SimFaults withTimeoutAfterAccept(double probability, long holdAfterAcceptMs) {
    return new SimFaults(
        latencyMs,
        jitterMs,
        probability,
        holdAfterAcceptMs,
        throttlePerSecond,
        errorRate,
        nonIdempotent,
        ignoreFencing,
        throttleShare);
  }

  public SimFaults withThrottlePerSecond(double rate) {
    return new SimFaults(
        latencyMs,
        jitterMs,
        timeoutAfterAccept,
        holdAfterAcceptMs,
        rate,
        errorRate,
        nonIdempotent,
        ignoreFencing,
        throttleShare);
  }

  public SimFaults withErrorRate(double probability) {
    return new SimFaults(
        latencyMs,
        jitterMs,
        timeoutAfterAccept,
        holdAfterAcceptMs,
        throttlePerSecond,
        probability,
        nonIdempotent,
        ignoreFencing,
        throttleShare);
  }

  public SimFaults withNonIdempotent(boolean nonIdempotent) {
    return new SimFaults(
        latencyMs,
        jitterMs,
        timeoutAfterAccept,
        holdAfterAcceptMs,
        throttlePerSecond,
        errorRate,
        nonIdempotent,
        ignoreFencing,
        throttleShare);
  }

  public SimFaults withIgnoreFencing(boolean ignoreFencing) {
    return new SimFaults(
        latencyMs,
        jitterMs,
        timeoutAfterAccept,
        holdAfterAcceptMs,
        throttlePerSecond,
        errorRate,
        nonIdempotent,
        ignoreFencing,
        throttleShare);
  }

  public SimFaults withThrottleShare(double share) {
    return new SimFaults(
        latencyMs,
        jitterMs,
        timeoutAfterAccept,
        holdAfterAcceptMs,
        throttlePerSecond,
        errorRate,
        nonIdempotent,
        ignoreFencing,
        share);
  }

  private static void requireNonNegative(String field, long value) {
    if (value < 0) {
      throw new IllegalArgumentException(field + " must be >= 0, got " + value);
    }
  }

  private static void requireProbability(String field, double value) {
    if (!(value >= 0 && value <= 1)) {
      throw new IllegalArgumentException(
          field + " must be a probability between 0 and 1, got " + value);
    }
  }
}

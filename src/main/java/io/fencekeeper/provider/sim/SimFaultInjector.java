package io.fencekeeper.provider.sim;

import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * Which of the {@link SimFaults} a call meets: the rate limit, its delay, and what becomes of it
 * afterwards. No HTTP here, so a test can hold the decisions themselves; the routes turn them into
 * answers. Every random draw comes from one seeded generator, in the order the calls ask, so a run
 * with the same seed meets the same faults.
 *
 * <p>A call's faults are the ones in force when it arrived: it passes that snapshot back for the
 * decisions made after its delay, so a {@code PUT /admin/faults} meanwhile only affects later
 * calls.
 */
final class SimFaultInjector {

  /** What becomes of an admitted cleanup once its delay is over. */
  sealed interface CleanupFate {
    /** Applied and answered. */
    record Answered() implements CleanupFate {}

    /**
     * A 5xx. A real provider fails both before touching anything and after committing the effect
     * but before answering; the caller cannot tell which, so it must reconcile.
     */
    record Failed(boolean applied) implements CleanupFate {}

    /** Applied, and the caller never hears of it: the connection drops after {@code holdMs}. */
    record Unanswered(long holdMs) implements CleanupFate {}
  }

  /**
   * A call beyond the rate limit, and how long until the bucket has a token again; or ({@code
   * ratePerSecond} 0) a call throttled at random ({@link SimFaults#throttleShare}).
   */
  record Throttled(double ratePerSecond, long waitMillis) {
    long retryAfterSeconds() {
      return Math.max(1, (waitMillis + 999) / 1000);
    }

    String reason() {
      return ratePerSecond > 0
          ? "rate limit of " + ratePerSecond + " requests per second exceeded"
          : "throttled at random (the sim's throttleShare)";
    }
  }

  private final RandomGenerator random;
  private final LongSupplier nanoClock;
  private volatile SimFaults faults;
  private volatile TokenBucket throttle;

  /** Calls decide concurrently: {@code random} must be thread-safe, as java.util.Random is. */
  SimFaultInjector(SimFaults faults, RandomGenerator random, LongSupplier nanoClock) {
    this.random = random;
    this.nanoClock = nanoClock;
    setFaults(faults);
  }

  SimFaults faults() {
    return faults;
  }

  /** The bucket survives a change that keeps its rate, so new knobs do not refill it. */
  void setFaults(SimFaults faults) {
    TokenBucket current = throttle;
    if (faults.throttlePerSecond() == 0) {
      throttle = null;
    } else if (current == null || current.ratePerSecond() != faults.throttlePerSecond()) {
      throttle = new TokenBucket(faults.throttlePerSecond(), nanoClock);
    }
    this.faults = faults;
  }

  /**
   * Takes a token for a {@code /v1} call, then draws whether it is throttled at random; empty when
   * it passes both.
   */
  Optional<Throttled> throttle() {
    TokenBucket bucket = throttle;
    long waitNanos = bucket == null ? 0 : bucket.tryAcquire();
    if (waitNanos == 0) {
      return chance(faults.throttleShare())
          ? Optional.of(new Throttled(0, SimFaults.RANDOM_THROTTLE_WAIT_MS))
          : Optional.empty();
    }
    long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos));
    return Optional.of(new Throttled(bucket.ratePerSecond(), waitMillis));
  }

  /** How long the call waits before it is processed: the latency plus a uniform jitter. */
  long delayMs(SimFaults current) {
    return current.latencyMs()
        + (current.jitterMs() > 0 ? random.nextLong(current.jitterMs() + 1) : 0);
  }

  /** Whether a read (a plan or a lookup) fails with a 5xx. */
  boolean readFails(SimFaults current) {
    return chance(current.errorRate());
  }

  CleanupFate cleanupFate(SimFaults current) {
    if (chance(current.errorRate())) {
      return new CleanupFate.Failed(!random.nextBoolean());
    }
    if (chance(current.timeoutAfterAccept())) {
      return new CleanupFate.Unanswered(current.holdAfterAcceptMs());
    }
    return new CleanupFate.Answered();
  }

  private boolean chance(double probability) {
    return probability > 0 && random.nextDouble() < probability;
  }
}

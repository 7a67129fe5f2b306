package io.fencekeeper.worker;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The client's two rules of the cleanup deadline (docs/provider-protocol.md, "The deadline"), for
 * one provider: the deadline a cleanup is sent with, and when a key may be looked up once cleanups
 * under it may have been sent. Pure: {@link ItemAttempt} asks, and carries the instants.
 *
 * @param requestTimeout the provider's request timeout: a cleanup sent at t has a deadline no later
 *     than t plus it
 * @param clockSkewAllowance added to the last deadline before a lookup, for the clocks of the
 *     sender, the provider and the item's host not agreeing (docs/cluster.md)
 */
public record CleanupDeadlines(Duration requestTimeout, Duration clockSkewAllowance) {

  public static final Duration DEFAULT_CLOCK_SKEW_ALLOWANCE = Duration.ofSeconds(1);

  /** The defaults of a provider that configures neither: 10 s and 1 s. */
  public static final CleanupDeadlines DEFAULTS =
      new CleanupDeadlines(Duration.ofSeconds(10), DEFAULT_CLOCK_SKEW_ALLOWANCE);

  public CleanupDeadlines {
    if (requestTimeout == null || requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("requestTimeout must be positive, got " + requestTimeout);
    }
    if (clockSkewAllowance == null || clockSkewAllowance.isNegative()) {
      throw new IllegalArgumentException(
          "clockSkewAllowance must be >= 0, got " + clockSkewAllowance);
    }
  }

  /**
   * The deadline of a cleanup sent at {@code now}: the earlier of {@code now} plus the request
   * timeout and the lease's end less the safety margin, so that a paused worker's late request
   * cannot commit after its lease even at a provider that does not fence. Whole milliseconds,
   * rounded down: what the header carries is what the worker waits for.
   */
  public Instant deadline(Instant now, Instant leaseEnd, Duration safetyMargin) {
    Instant byTimeout = now.plus(requestTimeout);
    Instant byLease = leaseEnd.minus(safetyMargin);
    Instant deadline = byTimeout.isBefore(byLease) ? byTimeout : byLease;
    return deadline.truncatedTo(ChronoUnit.MILLIS);
  }

  /**
   * When a key may be looked up, given that no cleanup sent under it may commit after {@code
   * lastDeadline} by the provider's clock: once that instant plus the allowance has passed here, a
   * lookup that finds nothing is final, even at a provider without idempotency keys.
   */
  public Instant lookupAt(Instant lastDeadline) {
    return lastDeadline.plus(clockSkewAllowance);
  }
}

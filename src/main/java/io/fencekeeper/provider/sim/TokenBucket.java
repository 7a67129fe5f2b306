package io.fencekeeper.provider.sim;

import java.util.function.LongSupplier;

/**
 * The sim's rate limit: {@code ratePerSecond} tokens a second, a burst of at most one second's
 * worth (never less than one request).
 */
final class TokenBucket {

  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  private final double ratePerSecond;
  private final double capacity;
  private final LongSupplier nanoClock;
  private double tokens;
  private long refilledAt;

  TokenBucket(double ratePerSecond, LongSupplier nanoClock) {
    this.ratePerSecond = ratePerSecond;
    this.capacity = Math.max(1.0, ratePerSecond);
    this.nanoClock = nanoClock;
    this.tokens = capacity;
    this.refilledAt = nanoClock.getAsLong();
  }

  double ratePerSecond() {
    return ratePerSecond;
  }

  /** 0 when a token was taken; otherwise how many nanoseconds until the next one is due. */
  synchronized long tryAcquire() {
    long now = nanoClock.getAsLong();
    tokens = Math.min(capacity, tokens + (now - refilledAt) * ratePerSecond / NANOS_PER_SECOND);
    refilledAt = now;
    if (tokens >= 1.0) {
      tokens -= 1.0;
      return 0;
    }
    return Math.max(1, (long) Math.ceil((1.0 - tokens) * NANOS_PER_SECOND / ratePerSecond));
  }
}

package io.fencekeeper.worker;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: retry n waits between half and all of base·2^n (capped), so a
 * fleet of workers that failed together does not come back together.
 */
public record Backoff(Duration base, Duration cap) {

  public static Backoff defaults() {
    return new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10));
  }

  public Duration delay(int retry) {
    long ceiling = base.toMillis() << Math.min(retry, 20);
    long capped = Math.min(ceiling, cap.toMillis());
    return Duration.ofMillis(ThreadLocalRandom.current().nextLong(capped / 2, capped + 1));
  }
}

package io.fencekeeper.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Real time plus an offset the test can jump: retries and backoff flow as usual, while a lease or a
 * deadline can be made to pass at once.
 */
public final class OffsetClock extends Clock {

  private final AtomicLong offsetMillis = new AtomicLong();

  public void jump(Duration duration) {
    offsetMillis.addAndGet(duration.toMillis());
  }

  @Override
  public Instant instant() {
    return Instant.now().plusMillis(offsetMillis.get());
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}

package io.fencekeeper.dispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A run's recent rate and projected finish from samples of the done count on a monotonic clock
 * (synthetic nanoseconds here, so nothing waits).
 */
class ProgressMeterTest {

  static final long SECOND = 1_000_000_000L;
  static final long START = 7_000 * SECOND; // System.nanoTime() has an arbitrary origin
  static final Instant NOW = Instant.parse("2026-11-30T02:00:00Z");

  final ProgressMeter meter = new ProgressMeter();

  @Test
  void noRateUntilTwoSamplesExist() {
    assertEquals(0, meter.itemsPerSecond());
    meter.sample(START, 100);
    assertEquals(0, meter.itemsPerSecond());
  }

  @Test
  void rateIsItemsDoneOverTheTimeBetweenTheFirstAndLastSample() {
    meter.sample(START, 100);
    meter.sample(START + 2 * SECOND, 130);
    meter.sample(START + 4 * SECOND, 180);

    assertEquals(20.0, meter.itemsPerSecond(), 1e-9);
  }

  @Test
  void samplesAtTheSameInstantGiveNoRate() {
    meter.sample(START, 100);
    meter.sample(START, 150);

    assertEquals(0, meter.itemsPerSecond());
  }

  @Test
  void theWindowDropsSamplesOlderThanTenSeconds() {
    meter.sample(START, 0); // a fast start the recent rate must forget
    meter.sample(START + SECOND, 1_000);
    for (int s = 2; s <= 20; s++) {
      meter.sample(START + s * SECOND, 1_000 + (s - 1) * 10L);
    }

    // what is left spans 10 s at 10 items/s
    assertEquals(10.0, meter.itemsPerSecond(), 1e-9);
  }

  @Test
  void theWindowKeepsTwoSamplesHoweverFarApart() {
    meter.sample(START, 0);
    meter.sample(START + 60 * SECOND, 120);

    assertEquals(2.0, meter.itemsPerSecond(), 1e-9);

    meter.sample(START + 120 * SECOND, 180);

    // the oldest goes, the two that are left still give a rate
    assertEquals(1.0, meter.itemsPerSecond(), 1e-9);
  }

  @Test
  void projectedFinishIsRemainingItemsAtTheRecentRate() {
    meter.sample(START, 0);
    meter.sample(START + 10 * SECOND, 50);

    assertEquals(NOW.plusSeconds(200), meter.projectedFinish(NOW, 1_000));
  }

  @Test
  void projectedFinishIsUnknownWhenNothingMoves() {
    assertNull(meter.projectedFinish(NOW, 10), "no samples");
    meter.sample(START, 40);
    meter.sample(START + 5 * SECOND, 40);

    assertNull(meter.projectedFinish(NOW, 10));
  }

  @Test
  void projectedFinishIsNowWhenNothingRemains() {
    assertEquals(NOW, meter.projectedFinish(NOW, 0), "even with no rate");
    meter.sample(START, 0);
    meter.sample(START + SECOND, 10);

    assertEquals(NOW, meter.projectedFinish(NOW, 0));
  }
}

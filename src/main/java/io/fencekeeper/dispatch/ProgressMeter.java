package io.fencekeeper.dispatch;

import java.time.Instant;
import java.util.ArrayDeque;

/**
 * A run's recent completion rate and projected finish, from a sample of the done count taken at
 * every dispatcher tick over the last ten seconds of real (monotonic) time.
 */
final class ProgressMeter {

  static final long WINDOW_NANOS = 10_000_000_000L;

  private record Sample(long nanos, long done) {}

  private final ArrayDeque<Sample> samples = new ArrayDeque<>();

  void sample(long nanos, long done) {
    samples.add(new Sample(nanos, done));
    while (samples.size() > 2 && nanos - samples.peekFirst().nanos() > WINDOW_NANOS) {
      samples.pollFirst();
    }
  }

  /** Items per second over the window; 0 until two samples exist. */
  double itemsPerSecond() {
    if (samples.size() < 2) {
      return 0;
    }
    Sample first = samples.peekFirst();
    Sample last = samples.peekLast();
    double seconds = (last.nanos() - first.nanos()) / 1_000_000_000.0;
    return seconds > 0 ? (last.done() - first.done()) / seconds : 0;
  }

  /** When {@code remaining} items finish at the recent rate; null when nothing is moving. */
  Instant projectedFinish(Instant now, long remaining) {
    if (remaining == 0) {
      return now;
    }
    double rate = itemsPerSecond();
    return rate > 0 ? now.plusMillis((long) (remaining / rate * 1000)) : null;
  }
}

package io.fencekeeper.provider.sim;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * How hard the simulated provider is called, as a provider would measure it: {@code /v1} requests
 * in flight at once (from the moment the server handles one until its answer is decided, just
 * before the caller can see it, or its connection dropped) and their peak, and how many arrived in
 * each wall-clock second. What a budget promises is checked here, where the calls land.
 */
final class SimTraffic {

  /** Seconds of per-second counts kept. */
  static final int SECONDS_KEPT = 600;

  private final LongSupplier millis;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger peak = new AtomicInteger();
  private final ConcurrentSkipListMap<Long, AtomicLong> perSecond = new ConcurrentSkipListMap<>();

  SimTraffic(LongSupplier millis) {
    this.millis = millis;
  }

  /** A request arrived; the answer ends it, exactly once. */
  Runnable begin() {
    peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    long second = Math.floorDiv(millis.getAsLong(), 1000);
    perSecond.computeIfAbsent(second, s -> new AtomicLong()).incrementAndGet();
    while (perSecond.size() > SECONDS_KEPT) {
      perSecond.pollFirstEntry();
    }
    AtomicBoolean ended = new AtomicBoolean();
    return () -> {
      if (ended.compareAndSet(false, true)) {
        inFlight.decrementAndGet();
      }
    };
  }

  int inFlight() {
    return inFlight.get();
  }

  int peakInFlight() {
    return peak.get();
  }

  /** Requests that arrived in each second (epoch seconds), oldest first. */
  Map<Long, Long> perSecond() {
    Map<Long, Long> counts = new TreeMap<>();
    perSecond.forEach((second, count) -> counts.put(second, count.get()));
    return counts;
  }

  void reset() {
    peak.set(inFlight.get());
    perSecond.clear();
  }
}

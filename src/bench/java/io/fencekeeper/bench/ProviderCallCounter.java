package io.fencekeeper.bench;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.worker.ItemAttempt;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the provider calls a node's workers make, by operation ({@code plan}, {@code apply},
 * {@code lookup}) and those that failed: the divisor of "CPU per provider call".
 */
final class ProviderCallCounter implements ItemAttempt.AttemptListener {

  private final Map<String, LongAdder> calls = new ConcurrentHashMap<>();
  private final LongAdder failed = new LongAdder();

  @Override
  public void providerCall(String operation, Duration latency, ProviderError error) {
    calls.computeIfAbsent(operation, k -> new LongAdder()).increment();
    if (error != null) {
      failed.increment();
    }
  }

  /** Forgets the calls so far (the warm-up's). */
  void reset() {
    calls.clear();
    failed.reset();
  }

  long total() {
    return calls.values().stream().mapToLong(LongAdder::sum).sum();
  }

  long failed() {
    return failed.sum();
  }

  /** Calls by operation, and {@code failed}. */
  Map<String, Long> snapshot() {
    Map<String, Long> counts = new TreeMap<>();
    calls.forEach((operation, n) -> counts.put(operation, n.sum()));
    counts.put("failed", failed.sum());
    return counts;
  }
}

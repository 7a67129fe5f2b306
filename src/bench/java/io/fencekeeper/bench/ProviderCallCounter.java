package io.fencekeeper.bench;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.worker.ItemAttempt;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the provider calls a node's workers make, by operation ({@code plan}, {@code apply},
 * {@code lookup}) and those that failed: the divisor of "CPU per provider call".
 */
final class ProviderCallCounter implements ItemAttempt.AttemptListener {

  /** The calls that failed, of every operation. */
  static final String FAILED = "failed";

  /** The calls answered 429, of every operation (counted in {@link #FAILED} too). */
  static final String THROTTLED = "throttled";

  /** The keys of {@link #snapshot()} that count outcomes, not operations. */
  static final java.util.Set<String> OUTCOMES = java.util.Set.of(FAILED, THROTTLED);

  private final Map<String, LongAdder> calls = new ConcurrentHashMap<>();
  private final LongAdder failed = new LongAdder();
  private final LongAdder throttled = new LongAdder();

  @Override
  public void providerCall(String operation, Duration latency, ProviderError error) {
    calls.computeIfAbsent(operation, k -> new LongAdder()).increment();
    if (error != null) {
      failed.increment();
    }
    if (error instanceof ProviderError.Throttled) {
      throttled.increment();
    }
  }

  /** Forgets the calls so far (the warm-up's). */
  void reset() {
    calls.clear();
    failed.reset();
    throttled.reset();
  }

  long total() {
    return calls.values().stream().mapToLong(LongAdder::sum).sum();
  }

  long failed() {
    return failed.sum();
  }

  /**
   * Samples the calls and the throttled ones every second until closed: {@link
   * EachSecond#seconds()} are the counts of each second, {@code {calls, throttled}}, oldest first.
   */
  EachSecond eachSecond() {
    return new EachSecond();
  }

  /** The calls of each second since it started; see {@link #eachSecond()}. */
  final class EachSecond implements AutoCloseable {
    private final List<long[]> seconds = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private long calls = total();
    private long throttledSoFar = throttled.sum();

    private EachSecond() {
      timer.scheduleAtFixedRate(this::sample, 1, 1, TimeUnit.SECONDS);
    }

    private void sample() {
      long nowCalls = total();
      long nowThrottled = throttled.sum();
      seconds.add(new long[] {nowCalls - calls, nowThrottled - throttledSoFar});
      calls = nowCalls;
      throttledSoFar = nowThrottled;
    }

    List<long[]> seconds() {
      return List.copyOf(seconds);
    }

    @Override
    public void close() throws InterruptedException {
      timer.shutdownNow();
      timer.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** Calls by operation, {@code failed} and {@code throttled}. */
  Map<String, Long> snapshot() {
    Map<String, Long> counts = new TreeMap<>();
    calls.forEach((operation, n) -> counts.put(operation, n.sum()));
    counts.put(FAILED, failed.sum());
    counts.put(THROTTLED, throttled.sum());
    return counts;
  }
}

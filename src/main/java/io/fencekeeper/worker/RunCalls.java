package io.fencekeeper.worker;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.budget.ThrottleShare;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The provider calls one pool's attempts make for one run's dispatcher, counted as each call ends
 * (from the attempts' threads) and drained by the pool into a {@link WorkProtocol.CallsMade}: the
 * run's governor reads throttling as the share of its calls that were throttled, not answer by
 * answer.
 */
final class RunCalls {

  private final LongAdder calls = new LongAdder();
  private final LongAdder throttled = new LongAdder();
  private final AtomicLong retryAfterMillis = new AtomicLong();

  /** A call ended; {@code error} null when it was answered. */
  void called(ProviderError error) {
    calls.increment();
    if (error instanceof ProviderError.Throttled t) {
      throttled.increment();
      retryAfterMillis.accumulateAndGet(t.retryAfter().toMillis(), Math::max);
    }
  }

  /** The calls since the last drain; a call that ends meanwhile counts in this one or the next. */
  ThrottleShare.Calls drain() {
    return new ThrottleShare.Calls(
        calls.sumThenReset(), throttled.sumThenReset(), retryAfterMillis.getAndSet(0));
  }
}

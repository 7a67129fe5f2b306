package io.fencekeeper.worker;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A provider without idempotency keys that keeps its deadlines late: every cleanup's answer is lost
 * (ambiguous at once), and the cleanup commits {@code early} before its deadline, as a slow
 * provider may. An effect committed at T exists for a lookup at T or later (the real clock), so no
 * timer decides what a lookup sees. A second apply is a second effect.
 */
final class LateCommitter implements Provider {

  private final Duration early;
  private final AtomicInteger applies = new AtomicInteger();
  private final AtomicInteger repeats = new AtomicInteger();
  private volatile Instant commitsAt;

  LateCommitter(Duration early) {
    this.early = early;
  }

  /** A cleanup a previous holder sent under a lease that ended at {@code leaseEnd}. */
  void commitLate(Instant leaseEnd) {
    commitsAt = leaseEnd.minus(early);
  }

  /** Cleanups sent to this provider. */
  int applies() {
    return applies.get();
  }

  /** Effects applied by now: the late one once it has committed, and every repeat. */
  int effects() {
    Instant committed = commitsAt;
    int late = committed != null && !Instant.now().isBefore(committed) ? 1 : 0;
    return late + repeats.get();
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    return CompletableFuture.completedFuture(Plan.action("void", 10, "EUR", "a stale hold"));
  }

  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    applies.incrementAndGet();
    if (commitsAt == null) {
      commitsAt = cleanup.deadline().minus(early);
    } else {
      // no keys: whatever came before, this is one more effect
      repeats.incrementAndGet();
    }
    return CompletableFuture.failedFuture(
        new ProviderException(new ProviderError.Ambiguous("connection reset after the send")));
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
    Instant committed = commitsAt;
    if (committed == null || Instant.now().isBefore(committed)) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    return CompletableFuture.completedFuture(
        Optional.of(new Receipt(idempotencyKey, "late-1", Receipt.APPLIED, committed)));
  }

  @Override
  public void close() {}
}

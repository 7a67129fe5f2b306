package io.fencekeeper.bench;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.KeepApart;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.Reply;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Measures how long a worker waits for the answer to {@code Claim}: the item gateway the workers
 * use, wrapped. Keeps up to {@code capacity} samples (8 bytes each); later claims are counted but
 * not sampled.
 */
final class ClaimTimings implements ItemGateway {

  private final ItemGateway items;
  private final AtomicLongArray nanos;
  private final AtomicInteger next = new AtomicInteger();

  ClaimTimings(ItemGateway items, int capacity) {
    this.items = items;
    this.nanos = new AtomicLongArray(capacity);
  }

  @Override
  public CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keepApart) {
    long started = System.nanoTime();
    return items
        .claim(item, workerId, lease, maxAttempts, keepApart)
        .whenComplete(
            (reply, failure) -> {
              int i = next.getAndIncrement();
              if (i < nanos.length()) {
                nanos.set(i, System.nanoTime() - started);
              }
            });
  }

  @Override
  public void claimAbandoned(ItemId item, String workerId) {
    items.claimAbandoned(item, workerId);
  }

  /** Forgets the samples so far (the warm-up's); claims still in flight may land afterwards. */
  void reset() {
    next.set(0);
  }

  /** Claim latency percentiles in milliseconds: p50, p99, max; zeros when nothing was claimed. */
  double[] percentilesMillis() {
    int n = Math.min(next.get(), nanos.length());
    if (n == 0) {
      return new double[] {0, 0, 0};
    }
    long[] sorted = new long[n];
    for (int i = 0; i < n; i++) {
      sorted[i] = nanos.get(i);
    }
    Arrays.sort(sorted);
    return new double[] {
      sorted[(int) Math.min(n - 1, Math.round(0.50 * (n - 1)))] / 1e6,
      sorted[(int) Math.min(n - 1, Math.round(0.99 * (n - 1)))] / 1e6,
      sorted[n - 1] / 1e6
    };
  }

  @Override
  public CompletionStage<Reply> renew(ItemId item, String workerId, long token, Duration lease) {
    return items.renew(item, workerId, token, lease);
  }

  @Override
  public CompletionStage<Reply> recordEffect(ItemId item, String workerId, long token, EffectOutcome outcome) {
    return items.recordEffect(item, workerId, token, outcome);
  }

  @Override
  public CompletionStage<Reply> markAmbiguous(ItemId item, String workerId, long token, String reason) {
    return items.markAmbiguous(item, workerId, token, reason);
  }

  @Override
  public CompletionStage<Reply> complete(ItemId item, String workerId, long token) {
    return items.complete(item, workerId, token);
  }

  @Override
  public CompletionStage<Reply> recordEffectAndComplete(
      ItemId item, String workerId, long token, io.fencekeeper.item.WorkItem.EffectOutcome outcome, int throttles) {
    return items.recordEffectAndComplete(item, workerId, token, outcome, throttles);
  }

  @Override
  public CompletionStage<Reply> fail(
      ItemId item, String workerId, long token, String error, boolean retryable, Duration retryAfter, int throttles) {
    return items.fail(item, workerId, token, error, retryable, retryAfter, throttles);
  }

  @Override
  public CompletionStage<Reply> release(ItemId item, String workerId, long token) {
    return items.release(item, workerId, token);
  }

  @Override
  public CompletionStage<Reply> close(ItemId item, String reason) {
    return items.close(item, reason);
  }

  @Override
  public CompletionStage<Reply> reopen(ItemId item) {
    return items.reopen(item);
  }

  @Override
  public CompletionStage<Reply> retry(ItemId item) {
    return items.retry(item);
  }

  @Override
  public CompletionStage<Reply> get(ItemId item) {
    return items.get(item);
  }
}

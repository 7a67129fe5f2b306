package io.fencekeeper.verify;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.budget.Permits;
import io.fencekeeper.worker.ItemAttempt.AttemptListener;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * One item of a verification: its state from its entity (the journal), then a lookup of its
 * idempotency key at the provider under a spare permit, judged by {@link Verdict}. A throttled
 * lookup waits its Retry-After (and its permit, given back with the 429, pauses every caller of the
 * node); other failures are retried with back-off. An item that cannot be checked fails the stage
 * with {@link CouldNotCheck}: a verification never reports an item it did not see.
 */
final class ItemCheck {

  /** Retries of a lookup that failed transiently, or of an item that did not answer. */
  static final int RETRIES = 10;

  /** Throttled answers one lookup waits out before the verification gives up. */
  static final int THROTTLED_RETRIES = 100;

  /** Why an item could not be checked; the verification ends FAILED with this reason. */
  static final class CouldNotCheck extends RuntimeException {
    CouldNotCheck(String reason) {
      super(reason, null, false, false);
    }
  }

  private final ItemGateway items;
  private final Provider provider;
  private final String providerName;
  private final SparePermits permits;
  private final BiConsumer<Duration, Runnable> later;
  private final AttemptListener listener;
  private final Duration firstBackoff;

  ItemCheck(
      ItemGateway items,
      Provider provider,
      String providerName,
      SparePermits permits,
      BiConsumer<Duration, Runnable> later,
      AttemptListener listener) {
    this(items, provider, providerName, permits, later, listener, FIRST_BACKOFF);
  }

  /** {@code firstBackoff}: the first retry's wait, doubling up to {@link #MAX_BACKOFF}. */
  ItemCheck(
      ItemGateway items,
      Provider provider,
      String providerName,
      SparePermits permits,
      BiConsumer<Duration, Runnable> later,
      AttemptListener listener,
      Duration firstBackoff) {
    this.firstBackoff = firstBackoff;
    this.items = items;
    this.provider = provider;
    this.providerName = providerName;
    this.permits = permits;
    this.later = later;
    this.listener = listener;
  }

  CompletionStage<Finding> check(long seq, ItemId item) {
    return journal(item, 0)
        .thenCompose(
            view ->
                lookup(item, view.idempotencyKey(), 0, 0)
                    .thenApply(answer -> Verdict.judge(seq, view, answer)));
  }

  private CompletionStage<ItemView> journal(ItemId item, int retry) {
    return items
        .get(item)
        .handle(
            (reply, failure) -> {
              if (failure == null && reply instanceof WorkItem.Accepted accepted) {
                return CompletableFuture.completedFuture(accepted.item());
              }
              if (retry + 1 >= RETRIES) {
                throw new CouldNotCheck(
                    "item "
                        + item
                        + " did not answer "
                        + RETRIES
                        + " times: "
                        + (failure != null ? root(failure) : reply));
              }
              return after(backoff(retry), () -> journal(item, retry + 1));
            })
        .thenCompose(stage -> stage);
  }

  private CompletionStage<Optional<Receipt>> lookup(
      ItemId item, String key, int retry, int throttled) {
    return permits
        .take()
        .thenCompose(permit -> call(item, key, permit))
        .handle(
            (found, failure) -> {
              if (failure == null) {
                return CompletableFuture.completedFuture(found);
              }
              ProviderError error = ProviderError.from(failure);
              if (error instanceof ProviderError.Throttled throttle) {
                if (throttled + 1 >= THROTTLED_RETRIES) {
                  throw couldNotLookUp(item, "throttled " + THROTTLED_RETRIES + " times");
                }
                Duration wait = throttle.retryAfter();
                wait = wait.compareTo(MIN_THROTTLE_WAIT) < 0 ? MIN_THROTTLE_WAIT : wait;
                return after(wait, () -> lookup(item, key, retry, throttled + 1));
              }
              if (error instanceof ProviderError.Permanent) {
                throw couldNotLookUp(item, "refused: " + error.message());
              }
              if (retry + 1 >= RETRIES) {
                throw couldNotLookUp(item, "failed " + RETRIES + " times: " + error.message());
              }
              return after(backoff(retry), () -> lookup(item, key, retry + 1, throttled));
            })
        .thenCompose(stage -> stage);
  }

  /** The shortest wait after a 429, whatever its Retry-After says. */
  static final Duration MIN_THROTTLE_WAIT = Duration.ofMillis(100);

  /** One lookup under its permit, given back with how the call ended. */
  private CompletionStage<Optional<Receipt>> call(ItemId item, String key, Permits.Permit permit) {
    long start = System.nanoTime();
    CompletionStage<Optional<Receipt>> call;
    try {
      call = provider.lookup(item, key);
    } catch (RuntimeException e) {
      call = CompletableFuture.failedFuture(e);
    }
    return call.whenComplete(
        (found, failure) -> {
          ProviderError error = failure == null ? null : ProviderError.from(failure);
          permit.release(error); // a 429 pauses every caller of this node and slows the budget
          listener.providerCall(
              "verify-lookup", Duration.ofNanos(System.nanoTime() - start), error);
        });
  }

  private CouldNotCheck couldNotLookUp(ItemId item, String why) {
    return new CouldNotCheck(
        "the lookup of item " + item + " at provider " + providerName + " " + why);
  }

  static final Duration FIRST_BACKOFF = Duration.ofMillis(250);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(10);

  private Duration backoff(int retry) {
    Duration wait = firstBackoff.multipliedBy(1L << Math.min(retry, 10));
    return wait.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : wait;
  }

  private <T> CompletionStage<T> after(Duration delay, Supplier<CompletionStage<T>> next) {
    CompletableFuture<T> answer = new CompletableFuture<>();
    later.accept(
        delay,
        () ->
            next.get()
                .whenComplete(
                    (value, failure) -> {
                      if (failure == null) {
                        answer.complete(value);
                      } else {
                        answer.completeExceptionally(failure);
                      }
                    }));
    return answer;
  }

  private static String root(Throwable failure) {
    Throwable t = failure;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.getClass().getSimpleName() + ": " + t.getMessage();
  }
}

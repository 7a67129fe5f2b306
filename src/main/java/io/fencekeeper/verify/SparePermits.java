package io.fencekeeper.verify;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.budget.PermitPool;
import io.fencekeeper.provider.budget.Permits;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * A verification's lookups under a provider's budget, at low priority (docs/design.md, "Verifying a
 * run"): a lookup takes a permit of the node's pool only when nobody waits for one ({@link
 * PermitPool#tryAcquire}), and the lookups of this node never hold more than half its permits nor
 * half its rate, so a run that calls the same provider always has the other half at once and the
 * rest within one lookup. Without a budget, {@code maxInFlight} alone bounds them. One per provider
 * and node, shared by every verification on the node.
 */
public final class SparePermits {

  /** How often a lookup that found no spare permit asks again. */
  static final Duration POLL = Duration.ofMillis(50);

  /** A lookup's permit holds its rate slot until this long after its end, as the pool's do. */
  static final Duration RATE_WINDOW = Duration.ofSeconds(1);

  /** The node's permits of one provider, as a caller of low priority sees them. */
  public interface Pool {
    /** A permit now if nobody waits for one; empty otherwise. */
    Optional<Permits.Permit> tryAcquire();

    /** Permits this node may use now; -1 without a budget. */
    int permits();

    /** Calls a second this node may make now; -1 without a rate limit. */
    int rate();
  }

  private final Pool pool;
  private final int maxInFlight;
  private final LongSupplier nanos;
  private final BiConsumer<Duration, Runnable> later;

  // guarded by this
  private int inFlight;
  private final ArrayDeque<Long> ends = new ArrayDeque<>();

  /** {@code later}: runs a task after a delay (the node's scheduler). */
  public SparePermits(
      Pool pool, int maxInFlight, LongSupplier nanos, BiConsumer<Duration, Runnable> later) {
    if (maxInFlight < 1) {
      throw new IllegalArgumentException("maxInFlight must be at least 1, got " + maxInFlight);
    }
    this.pool = pool;
    this.maxInFlight = maxInFlight;
    this.nanos = nanos;
    this.later = later;
  }

  /** The pool of a node's provider as a {@link Pool}. */
  public static Pool of(PermitPool pool) {
    return new Pool() {
      @Override
      public Optional<Permits.Permit> tryAcquire() {
        return pool.tryAcquire();
      }

      @Override
      public int permits() {
        return pool.permits();
      }

      @Override
      public int rate() {
        return pool.rate();
      }
    };
  }

  /** A permit as soon as one is spare; fails (transient) when the node stops. */
  public CompletionStage<Permits.Permit> take() {
    Optional<Permits.Permit> now;
    try {
      now = tryTake();
    } catch (ProviderException stopping) {
      return CompletableFuture.failedFuture(stopping);
    }
    if (now.isPresent()) {
      return CompletableFuture.completedFuture(now.get());
    }
    CompletableFuture<Permits.Permit> answer = new CompletableFuture<>();
    later.accept(
        POLL,
        () ->
            take()
                .whenComplete(
                    (permit, failure) -> {
                      if (failure == null) {
                        answer.complete(permit);
                      } else {
                        answer.completeExceptionally(failure);
                      }
                    }));
    return answer;
  }

  /** A permit now if one is spare, else empty. */
  public synchronized Optional<Permits.Permit> tryTake() {
    long now = nanos.getAsLong();
    while (!ends.isEmpty() && now - ends.peekFirst() >= RATE_WINDOW.toNanos()) {
      ends.pollFirst();
    }
    int permits = pool.permits();
    int cap = permits < 0 ? maxInFlight : Math.min(maxInFlight, Math.max(1, permits / 2));
    if (inFlight >= cap) {
      return Optional.empty();
    }
    int rate = pool.rate();
    if (rate >= 0 && inFlight + ends.size() >= Math.max(1, rate / 2)) {
      return Optional.empty();
    }
    Optional<Permits.Permit> taken = pool.tryAcquire();
    if (taken.isEmpty()) {
      return Optional.empty();
    }
    inFlight++;
    Permits.Permit permit = taken.get();
    AtomicBoolean released = new AtomicBoolean();
    return Optional.of(
        (ProviderError error) -> {
          if (released.compareAndSet(false, true)) {
            synchronized (this) {
              inFlight--;
              ends.addLast(nanos.getAsLong());
            }
            permit.release(error); // a throttled answer pauses every caller of the node
          }
        });
  }

  /** Lookups of verifications in flight on this node now. */
  public synchronized int inFlight() {
    return inFlight;
  }
}

package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.budget.Permits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A verification's share of a node's permits: at most half the permits and half the rate of a
 * budget, at most {@code max-in-flight} without one, and nothing the pool will not give.
 */
class SparePermitsTest {

  /** A node's pool as far as a lookup sees it: permits and rate the test sets. */
  static final class NodePool implements SparePermits.Pool {
    int permits = -1;
    int rate = -1;
    boolean someoneWaits;
    final AtomicInteger inFlight = new AtomicInteger();
    final List<ProviderError> released = new ArrayList<>();

    @Override
    public Optional<Permits.Permit> tryAcquire() {
      if (someoneWaits || (permits >= 0 && inFlight.get() >= permits)) {
        return Optional.empty();
      }
      inFlight.incrementAndGet();
      return Optional.of(
          error -> {
            inFlight.decrementAndGet();
            released.add(error);
          });
    }

    @Override
    public int permits() {
      return permits;
    }

    @Override
    public int rate() {
      return rate;
    }
  }

  final NodePool pool = new NodePool();
  final AtomicLong nanos = new AtomicLong();
  final List<Runnable> later = new ArrayList<>();
  final SparePermits spare =
      new SparePermits(pool, 4, nanos::get, (delay, task) -> later.add(task));

  List<Permits.Permit> takeAll() {
    List<Permits.Permit> taken = new ArrayList<>();
    for (Optional<Permits.Permit> p = spare.tryTake(); p.isPresent(); p = spare.tryTake()) {
      taken.add(p.get());
    }
    return taken;
  }

  @Test
  void withoutABudgetMaxInFlightBoundsTheLookups() {
    assertEquals(4, takeAll().size());
    assertEquals(4, spare.inFlight());
  }

  @Test
  void withABudgetAtMostHalfOfTheNodesPermits() {
    pool.permits = 6;
    assertEquals(3, takeAll().size(), "the other half stays free for a run");

    pool.permits = 1;
    SparePermits lone = new SparePermits(pool, 4, nanos::get, (d, t) -> {});
    pool.inFlight.set(0);
    assertTrue(lone.tryTake().isPresent(), "one permit: a lookup may still use it");
  }

  @Test
  void withARateAtMostHalfOfItAndASlotHeldASecondAfterTheCall() {
    pool.permits = 100;
    pool.rate = 4;
    List<Permits.Permit> taken = takeAll();
    assertEquals(2, taken.size());

    taken.forEach(p -> p.release(null));
    assertTrue(spare.tryTake().isEmpty(), "the slots are held for a second after the calls");
    nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    assertTrue(spare.tryTake().isPresent());
  }

  @Test
  void nothingWhileACallerOfTheNodeWaits() {
    pool.someoneWaits = true;
    assertTrue(spare.tryTake().isEmpty());
  }

  @Test
  void aLookupThatFoundNoPermitAsksAgainLaterAndGetsOneWhenItIsSpare() {
    pool.someoneWaits = true;
    CompletableFuture<Permits.Permit> waiting = spare.take().toCompletableFuture();
    assertFalse(waiting.isDone());
    assertEquals(1, later.size(), "it asks again after a while");

    pool.someoneWaits = false;
    later.remove(0).run();

    assertTrue(waiting.isDone());
  }

  @Test
  void howTheLookupEndedGoesBackToThePoolOnce() {
    Permits.Permit permit = spare.tryTake().orElseThrow();
    ProviderError throttled = new ProviderError.Throttled(Duration.ofSeconds(1), "slow down");

    permit.release(throttled);
    permit.release(null);

    assertEquals(List.of(throttled), pool.released, "a 429 reaches the pool, and only once");
    assertEquals(0, spare.inFlight());
  }
}

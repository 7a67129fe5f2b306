package io.fencekeeper.provider.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Calls of low priority (a verification's lookups, {@link PermitPool#tryAcquire}): they never go
 * ahead of a caller that waits, and they count as one call in what the node asks of the keeper, so
 * a run's demand is met before theirs.
 */
class PermitPoolLowPriorityTest {

  final ManualTimer timer = new ManualTimer();
  final AtomicInteger reportsWanted = new AtomicInteger();
  final PermitPool pool =
      new PermitPool(
          "payments", new ProviderBudget(8, 0), Duration.ofSeconds(2), timer::nanos, timer);
  int versions;

  PermitPoolLowPriorityTest() {
    pool.onReportWanted(reportsWanted::incrementAndGet);
  }

  void grant(int permits) {
    pool.apply(
        new BudgetKeeper.Grant(
            "payments", true, permits, -1, Duration.ofSeconds(6), 0, 7, ++versions),
        timer.nanos(),
        true);
  }

  CompletableFuture<Optional<Permits.Permit>> acquire() {
    return pool.acquire(Duration.ofSeconds(30)).toCompletableFuture();
  }

  @Test
  void aSparePermitIsTakenOnlyWhileOneIsFree() {
    grant(2);
    Permits.Permit one = pool.tryAcquire().orElseThrow();
    Permits.Permit two = pool.tryAcquire().orElseThrow();

    assertTrue(pool.tryAcquire().isEmpty(), "both permits are in use");
    one.release(null);
    assertTrue(pool.tryAcquire().isPresent());
    two.release(null);
  }

  @Test
  void aCallerThatWaitsGetsThePermitBeforeAnyCallOfLowPriority() {
    grant(1);
    Permits.Permit spare = pool.tryAcquire().orElseThrow();
    CompletableFuture<Optional<Permits.Permit>> waiting = acquire();
    assertFalse(waiting.isDone());

    spare.release(null);

    assertTrue(waiting.isDone(), "the waiting caller got the permit the lookup gave back");
    assertTrue(pool.tryAcquire().isEmpty());
    waiting.join().orElseThrow().release(null);
    assertTrue(pool.tryAcquire().isPresent(), "and the lookup gets it once nobody waits");
  }

  @Test
  void callsOfLowPriorityCountAsOneInTheNodesDemand() {
    grant(8);
    List<Permits.Permit> lookups = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      lookups.add(pool.tryAcquire().orElseThrow());
    }
    assertEquals(1, pool.report().demand(), "five lookups ask the keeper for one permit");

    Permits.Permit work = acquire().join().orElseThrow();
    Permits.Permit more = acquire().join().orElseThrow();

    assertEquals(3, pool.report().demand(), "two calls of a run and the lookups as one");
    lookups.forEach(p -> p.release(null));
    work.release(null);
    more.release(null);
    pool.report(); // the peak since the last report
    assertEquals(0, pool.report().demand());
  }

  @Test
  void aNodeWhoseOnlyCallsAreLookupsAsksTheKeeperForPermits() {
    assertTrue(pool.tryAcquire().isEmpty(), "nothing granted yet");

    assertEquals(1, reportsWanted.get(), "the keeper is asked");
    assertEquals(1, pool.report().demand());
    grant(8);
    assertTrue(pool.tryAcquire().isPresent());
  }

  @Test
  void throttledLookupsThatSayTheProviderLimitsPauseEveryCallerOfTheNode() {
    grant(4);
    // six lookups in a row answered 429: a share that limits, not noise
    for (int i = 0; i < ThrottleShare.MIN_THROTTLED; i++) {
      Permits.Permit lookup = pool.tryAcquire().orElseThrow();
      lookup.release(new ProviderError.Throttled(Duration.ofSeconds(2), "slow down"));
    }

    assertTrue(pool.tryAcquire().isEmpty());
    CompletableFuture<Optional<Permits.Permit>> waiting = acquire();
    assertFalse(waiting.isDone(), "a run's call waits the Retry-After too");
    timer.advance(Duration.ofSeconds(2));
    assertTrue(waiting.isDone(), "the waiting call goes first once the pause is over");
    assertTrue(pool.tryAcquire().isPresent(), "then the lookups again");
  }

  @Test
  void aStoppingNodeStartsNoLookup() {
    grant(4);
    pool.close();

    ProviderException refused = assertThrows(ProviderException.class, pool::tryAcquire);
    assertInstanceOf(ProviderError.Transient.class, refused.error());
  }

  @Test
  void withoutABudgetALookupGoesAtOnce() {
    PermitPool unlimited =
        new PermitPool("sim", ProviderBudget.NONE, Duration.ofSeconds(2), timer::nanos, timer);

    for (int i = 0; i < 100; i++) {
      assertTrue(unlimited.tryAcquire().isPresent());
    }
    assertEquals(-1, unlimited.rate());
  }
}

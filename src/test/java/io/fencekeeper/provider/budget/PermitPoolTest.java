package io.fencekeeper.provider.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.ProviderError;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A node's permits of one provider: what may start, when, and what it tells the keeper. */
class PermitPoolTest {

  static final Duration LEASE = Duration.ofSeconds(6);
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  static final Duration WAIT = Duration.ofSeconds(30);

  final ManualTimer timer = new ManualTimer();
  final AtomicInteger reportsWanted = new AtomicInteger();
  final PermitPool pool =
      new PermitPool("payments", new ProviderBudget(8, 40), CALL_TIMEOUT, timer::nanos, timer);

  PermitPoolTest() {
    pool.onReportWanted(reportsWanted::incrementAndGet);
  }

  void grant(int permits, int rate) {
    pool.apply(grant(permits, rate, 0), timer.nanos(), true);
  }

  int versions;

  BudgetKeeper.Grant grant(int permits, int rate, long replyTo) {
    return new BudgetKeeper.Grant("payments", true, permits, rate, LEASE, replyTo, 7, ++versions);
  }

  CompletableFuture<Optional<Permits.Permit>> acquire() {
    return pool.acquire(WAIT).toCompletableFuture();
  }

  static Permits.Permit held(CompletableFuture<Optional<Permits.Permit>> f) {
    assertTrue(f.isDone(), "a permit was handed out");
    return f.join().orElseThrow();
  }

  @Test
  void callsWaitForAGrantBeforeTheFirstOne() {
    var first = acquire();
    assertFalse(first.isDone());
    assertEquals(1, reportsWanted.get(), "the keeper is asked at once");
    grant(1, -1);
    held(first);
  }

  @Test
  void aCallWaitsUntilAPermitIsGivenBack() {
    grant(2, -1);
    Permits.Permit one = held(acquire());
    held(acquire());
    var third = acquire();
    assertFalse(third.isDone(), "two permits, two calls");
    one.release(null);
    held(third);
    assertEquals(2, pool.inFlight());
  }

  @Test
  void aCallHoldsItsRateSlotFromItsStartUntilASecondAfterItsEnd() {
    grant(10, 5);
    List<Permits.Permit> calls = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      calls.add(held(acquire()));
    }
    var sixth = acquire();
    assertFalse(sixth.isDone(), "five calls in flight hold the five slots of a second");
    timer.advance(Duration.ofMillis(100));
    calls.get(0).release(null);
    assertFalse(sixth.isDone(), "an ended call may have reached the provider just now");
    timer.advance(Duration.ofMillis(999));
    assertFalse(sixth.isDone());
    timer.advance(Duration.ofMillis(1));
    held(sixth);
    // a call that lasts longer than a second holds its slot all along
    timer.advance(Duration.ofSeconds(3));
    grant(10, 5); // renewed
    var seventh = acquire();
    assertFalse(seventh.isDone(), "four slow calls and the sixth hold the five slots");
    calls.get(1).release(null);
    timer.advance(PermitPool.RATE_WINDOW);
    held(seventh);
  }

  @Test
  void noCallStartsThatTheLeaseMayNotOutlive() {
    grant(4, -1);
    timer.advance(LEASE.minus(CALL_TIMEOUT).minusMillis(1));
    held(acquire()).release(null);
    timer.advance(Duration.ofMillis(1));
    var late = acquire();
    assertFalse(late.isDone(), "a call now could outlive the lease");
    assertEquals(0, pool.permits());
    grant(4, -1); // the renewal's answer, sent now
    held(late);
  }

  @Test
  void aPushedGrantNeverExtendsTheLease() {
    grant(2, -1);
    timer.advance(Duration.ofSeconds(3));
    pool.apply(grant(5, -1, -1), -1, true);
    assertEquals(5, pool.permits(), "a push may grow the grant");
    timer.advance(Duration.ofSeconds(1));
    assertEquals(0, pool.permits(), "but the lease still counts from the last renewal");
  }

  static final ProviderError.Throttled THROTTLED =
      new ProviderError.Throttled(Duration.ofMillis(500), "429");

  /** {@code calls} calls that end now, the first {@code throttled} of them answered 429. */
  void callsEnd(int calls, int throttled) {
    for (int i = 0; i < calls; i++) {
      held(acquire()).release(i < throttled ? THROTTLED : null);
    }
  }

  @Test
  void aThrottledShareThatLimitsPausesEveryCallerOfTheNodeAndTellsTheKeeper() {
    grant(4, -1);
    int before = reportsWanted.get();
    callsEnd(20, 5);
    assertTrue(acquire().isDone(), "five 429s are too few to tell a limit from noise");
    Permits.Permit call = held(acquire());

    call.release(THROTTLED); // the sixth 429 in 21 calls: the provider limits this node

    assertTrue(reportsWanted.get() > before, "the keeper hears at once");
    var next = acquire();
    assertFalse(next.isDone(), "Retry-After holds every caller of this node");
    timer.advance(Duration.ofMillis(500));
    held(next);
    PermitPool.Report report = pool.report();
    assertEquals(21, report.calls());
    assertEquals(6, report.throttled());
    assertEquals(500, report.retryAfterMillis());
    PermitPool.Report again = pool.report();
    assertEquals(0, again.throttled(), "each answer is reported once");
    assertEquals(0, again.calls());
  }

  @Test
  void aThrottledAnswerOfTheProvidersNoiseIsWaitedOutByItsOwnCallOnly() {
    grant(4, -1);
    callsEnd(200, 0);
    int before = reportsWanted.get();

    callsEnd(1, 1);

    assertTrue(acquire().isDone(), "the other callers go on");
    assertEquals(before, reportsWanted.get(), "one 429 in 201 calls: the next renewal says it");
    assertEquals(1, pool.report().throttled());
  }

  @Test
  void aShrunkGrantCountsAsHeldUntilItDrainsThenTheKeeperHears() {
    grant(4, -1);
    List<Permits.Permit> calls = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      calls.add(held(acquire()));
    }
    pool.report();
    pool.apply(grant(1, -1, -1), -1, false);
    assertEquals(4, pool.report().holding(), "four calls are still in flight");
    int before = reportsWanted.get();
    calls.get(0).release(null);
    calls.get(1).release(null);
    assertEquals(before, reportsWanted.get());
    calls.get(2).release(null);
    assertEquals(before + 1, reportsWanted.get(), "drained to the new grant: the keeper hears");
    assertEquals(1, pool.report().holding());
  }

  @Test
  void demandIsThePeakOfCallsInFlightAndWaitingSinceTheLastReport() {
    grant(1, -1);
    Permits.Permit first = held(acquire());
    var second = acquire();
    var third = acquire();
    first.release(null);
    held(second).release(null);
    held(third).release(null);
    PermitPool.Report report = pool.report();
    assertEquals(3, report.demand());
    assertEquals(0, report.inFlight());
    assertEquals(0, pool.report().demand());
  }

  @Test
  void aWaiterGivesUpAfterItsMaxWait() {
    grant(0, -1);
    var waiting = pool.acquire(Duration.ofSeconds(2)).toCompletableFuture();
    timer.advance(Duration.ofSeconds(2));
    assertTrue(waiting.isDone());
    assertEquals(Optional.empty(), waiting.join());
  }

  @Test
  void aStoppingNodeStartsNoMoreBudgetedCalls() {
    grant(1, -1);
    Permits.Permit inFlight = held(acquire());
    var waiting = acquire();
    pool.close();
    assertTrue(waiting.isCompletedExceptionally(), "a waiting call is told the node stops");
    var later = acquire().toCompletableFuture();
    assertTrue(later.isCompletedExceptionally());
    ProviderError error = ProviderError.from(later.handle((ok, failure) -> failure).join());
    assertTrue(error instanceof ProviderError.Transient, "nothing was sent: " + error);
    assertEquals(1, pool.mayUse(), "the call in flight still ends as it does");
    inFlight.release(null);
    assertEquals(0, pool.mayUse());
  }

  @Test
  void withoutABudgetEveryCallGoesAtOnce() {
    PermitPool free =
        new PermitPool("default", ProviderBudget.NONE, CALL_TIMEOUT, timer::nanos, timer);
    for (int i = 0; i < 100; i++) {
      held(free.acquire(WAIT).toCompletableFuture());
    }
    assertEquals(100, free.inFlight());
    held(free.acquire(WAIT).toCompletableFuture())
        .release(new ProviderError.Throttled(Duration.ofSeconds(1), "429"));
    held(free.acquire(WAIT).toCompletableFuture()); // no pause: nothing is shared
    assertEquals(-1, free.permits());
  }

  /**
   * Issue 36: the keeper's push that a provider now has a budget stops an unbudgeted pool at once.
   * The calls already in flight go on (they are reported as held); a new call waits for a grant,
   * and the keeper is asked for one.
   */
  @Test
  void aPushedBudgetStopsAPoolThatHadNoneAtOnce() {
    PermitPool free =
        new PermitPool("default", ProviderBudget.NONE, CALL_TIMEOUT, timer::nanos, timer);
    AtomicInteger asked = new AtomicInteger();
    free.onReportWanted(asked::incrementAndGet);
    Permits.Permit running = held(free.acquire(WAIT).toCompletableFuture());
    free.apply(grant(0, -1, -1), -1, false);
    var next = free.acquire(WAIT).toCompletableFuture();
    assertFalse(next.isDone(), "a call after the push waits for a grant");
    assertEquals(1, free.inFlight(), "the call in flight goes on");
    assertEquals(1, asked.get(), "the keeper is asked at once");
    running.release(null);
    assertFalse(next.isDone(), "a call that ends frees no permit the keeper has not granted");
  }
}

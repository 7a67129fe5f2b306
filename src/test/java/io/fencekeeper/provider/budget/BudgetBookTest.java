package io.fencekeeper.provider.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.budget.BudgetBook.Outgoing;
import io.fencekeeper.provider.budget.BudgetBook.Report;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The keeper's books for one provider: one test per rule of docs/design.md, "Provider budgets". */
class BudgetBookTest {

  static final Duration LEASE = Duration.ofSeconds(6);
  static final Instant AT = Instant.parse("2026-11-30T02:00:00Z");
  static final long EPOCH = 42;

  long now;
  final Map<String, BudgetKeeper.Grant> lastGrant = new HashMap<>();
  final Map<String, Long> seqs = new HashMap<>();

  BudgetBook book(ProviderBudget budget) {
    return new BudgetBook(
        "payments", EPOCH, budget, "config", LEASE, Duration.ofSeconds(2), now, AT);
  }

  /** A node's renewal, acknowledging every grant it was sent so far, after no calls. */
  List<Outgoing> renew(BudgetBook book, String node, int holding, int demand, int throttled) {
    return renew(book, node, holding, demand, throttled, throttled);
  }

  /** A node's renewal after {@code calls} calls, {@code throttled} of them answered 429. */
  List<Outgoing> renew(
      BudgetBook book, String node, int holding, int demand, long calls, int throttled) {
    BudgetKeeper.Grant last = lastGrant.get(node);
    long seq = seqs.merge(node, 1L, Long::sum);
    List<Outgoing> out =
        book.renew(
            node,
            new Report(
                node,
                seq,
                last == null ? 0 : last.epoch(),
                last == null ? -1 : last.version(),
                holding,
                holding,
                holding,
                demand,
                calls,
                throttled,
                throttled > 0 ? 500 : 0),
            now,
            AT.plusNanos(now));
    deliver(out);
    return out;
  }

  void deliver(List<Outgoing> out) {
    out.forEach(o -> lastGrant.put(o.holderId(), o.grant()));
  }

  int granted(String node) {
    return lastGrant.get(node).permits();
  }

  void tick(BudgetBook book, Set<String> up) {
    deliver(book.tick(now, AT.plusNanos(now), up));
  }

  void advance(Duration by) {
    now += by.toNanos();
  }

  /** A book past its recovery: both nodes reported. */
  BudgetBook running(ProviderBudget budget) {
    BudgetBook book = book(budget);
    renew(book, "a", 0, 0, 0);
    renew(book, "b", 0, 0, 0);
    tick(book, Set.of("a", "b"));
    assertFalse(book.view(now).recovering());
    return book;
  }

  @Test
  void nodesGetWhatTheyAskForAndTheRestIsSpreadOverTheBusyOnes() {
    BudgetBook book = running(new ProviderBudget(8, 40));
    renew(book, "a", 0, 3, 0);
    assertEquals(8, granted("a"), "alone, a node gets the whole budget as slack");
    assertEquals(40, lastGrant.get("a").rate());
    renew(book, "b", 0, 1, 0);
    // a was pushed its share down at once; b gets the room once a says it drained
    assertTrue(granted("a") < 8, "pushed: " + granted("a"));
    renew(book, "a", granted("a"), 3, 0);
    renew(book, "b", 0, 1, 0);
    assertEquals(8, granted("a") + granted("b"));
    assertTrue(granted("a") >= 3 && granted("b") >= 1, lastGrant.toString());
    assertEquals(40, lastGrant.get("a").rate() + lastGrant.get("b").rate());
  }

  @Test
  void aShrunkGrantIsCountedUntilTheNodeReportsItDrained() {
    BudgetBook book = running(new ProviderBudget(8, 0));
    renew(book, "a", 0, 8, 0);
    assertEquals(8, granted("a"));
    // b wants half; a still reports 8 in flight: nothing is free until it drains
    renew(book, "b", 0, 8, 0);
    assertEquals(4, granted("a"), "a's grant shrinks at once");
    assertEquals(0, granted("b"), "but a may still be using all 8");
    renew(book, "a", 4, 8, 0);
    renew(book, "b", 0, 8, 0);
    assertEquals(4, granted("b"));
  }

  @Test
  void aGrantTheNodeHasNotAcknowledgedIsCountedAtItsSize() {
    BudgetBook book = running(new ProviderBudget(8, 0));
    renew(book, "a", 0, 8, 0);
    assertEquals(8, granted("a"));
    // a's next report was sent before it saw the grant of 8: it says it holds nothing
    long seq = seqs.merge("a", 1L, Long::sum);
    deliver(book.renew("a", new Report("a", seq, EPOCH, -1, 0, 0, 0, 8, 0, 0, 0), now, AT));
    renew(book, "b", 0, 8, 0);
    assertEquals(0, granted("b"), "a may have started 8 calls on the grant it had not reported");
  }

  @Test
  void aDeadNodesPermitsComeBackAfterTheLeaseAndNotBefore() {
    BudgetBook book = running(new ProviderBudget(6, 0));
    renew(book, "a", 0, 6, 0);
    renew(book, "b", 0, 6, 0);
    renew(book, "a", 3, 6, 0);
    renew(book, "b", 0, 6, 0);
    assertEquals(3, granted("a"));
    assertEquals(3, granted("b"));
    // a dies holding 3; b keeps renewing and wants more
    for (int i = 0; i < 6; i++) {
      advance(Duration.ofSeconds(1));
      tick(book, Set.of("a", "b"));
      renew(book, "b", 3, 6, 0);
      assertEquals(3, granted("b"), "a's lease may still be in use after " + (i + 1) + " s");
    }
    advance(BudgetBook.EXPIRY_MARGIN);
    tick(book, Set.of("b"));
    assertEquals(6, granted("b"), "a's permits came back once its lease ran out");
    assertTrue(
        book.view(now).changes().stream().anyMatch(c -> c.reason().startsWith("a did not renew")),
        "the decision log says why");
  }

  @Test
  void aKeeperThatStartsGrantsNoMoreThanNodesHoldUntilEveryMemberReported() {
    BudgetBook book = book(new ProviderBudget(8, 0));
    assertTrue(book.view(now).recovering());
    // a held 5 from the previous keeper, b held 3
    renew(book, "a", 5, 8, 0);
    assertEquals(5, granted("a"), "a keeps what it holds, no more");
    tick(book, Set.of("a", "b"));
    assertTrue(book.view(now).recovering(), "b has not reported: its permits may be out there");
    renew(book, "b", 3, 8, 0);
    assertEquals(3, granted("b"));
    tick(book, Set.of("a", "b"));
    assertFalse(book.view(now).recovering());
    // every member reported: from now on the books are complete
    renew(book, "a", 4, 8, 0);
    renew(book, "b", 3, 8, 0);
    assertEquals(4, granted("a"));
    assertEquals(4, granted("b"));
  }

  @Test
  void aNodesDemandFallsSlowlySoGrantsDoNotChaseEveryItem() {
    BudgetBook book = running(new ProviderBudget(8, 0));
    renew(book, "a", 0, 6, 0);
    renew(book, "b", 0, 6, 0);
    renew(book, "a", 4, 6, 0);
    renew(book, "b", 0, 6, 0);
    assertEquals(4, granted("a"));
    assertEquals(4, granted("b"));
    // a's work dips for a moment: its grant stays
    advance(Duration.ofSeconds(1));
    renew(book, "a", 4, 1, 0);
    renew(book, "b", 4, 8, 0);
    assertEquals(4, granted("a"));
    // it stays low past the demand memory: now the permits go where the work is
    advance(BudgetBook.DEMAND_MEMORY);
    renew(book, "a", 4, 1, 0);
    renew(book, "a", 1, 1, 0);
    renew(book, "b", 4, 8, 0);
    assertEquals(1, granted("a"));
    assertEquals(7, granted("b"));
  }

  @Test
  void aKeeperThatStartsWaitsAtMostALeaseForAMemberThatNeverReports() {
    BudgetBook book = book(new ProviderBudget(8, 0));
    renew(book, "a", 0, 8, 0);
    assertEquals(0, granted("a"));
    advance(LEASE.plus(BudgetBook.EXPIRY_MARGIN));
    tick(book, Set.of("a", "silent"));
    renew(book, "a", 0, 8, 0);
    assertEquals(8, granted("a"));
  }

  @Test
  void aThrottledShareFromAnyNodeHalvesEveryNodesGrantAndEveryRunsShare() {
    BudgetBook book = running(new ProviderBudget(8, 40));
    renew(book, "a", 0, 4, 0);
    renew(book, "b", 0, 4, 0);
    renew(book, "a", 4, 4, 0);
    renew(book, "b", 0, 4, 0);
    assertEquals(4, granted("a"));
    assertEquals(4, granted("b"));
    assertEquals(8, book.reportRun("tonight", 16, false, now).share(), "alone, it has it all");
    assertEquals(4, book.reportRun("last-night", 16, false, now).share());
    assertEquals(4, book.reportRun("tonight", 16, false, now).share());
    renew(book, "b", 4, 4, 20, 10);
    BudgetView view = book.view(now);
    assertEquals(4, view.effectiveInFlight());
    assertEquals(20, view.effectiveRate());
    assertEquals(2, granted("a"), "a was slowed by b's 429s");
    assertEquals(2, granted("b"));
    assertEquals(2, book.reportRun("tonight", 16, false, now).share());
    assertEquals(2, book.reportRun("last-night", 16, false, now).share());
    assertTrue(view.changes().get(view.changes().size() - 1).reason().contains("reported by b"));
    assertEquals(10, view.throttling().total());
  }

  @Test
  void aRunInBurstBorrowsFromOneThatIsNot() {
    BudgetBook book = running(new ProviderBudget(8, 0));
    book.reportRun("on-time", 16, false, now);
    assertEquals(5, book.reportRun("late", 32, true, now).share());
    assertEquals(3, book.reportRun("on-time", 16, false, now).share());
    book.leaveRun("late");
    assertEquals(8, book.reportRun("on-time", 16, false, now).share());
  }

  @Test
  void anOperatorsBudgetOnAProviderWithoutOneCountsTheCallsInFlightFirst() {
    BudgetBook book = running(ProviderBudget.NONE);
    renew(book, "a", 7, 7, 0);
    assertFalse(lastGrant.get("a").limited());
    deliver(book.set(new ProviderBudget(4, 0), "operator", now, AT));
    assertTrue(lastGrant.get("a").limited(), "pushed at once");
    assertTrue(book.view(now).recovering());
    renew(book, "b", 0, 4, 0);
    assertEquals(0, granted("b"), "a's 7 calls were never counted: nothing is free yet");
  }

  /**
   * Issue 36: an idle node's grant does not change when a budget comes (0 permits before, 0 after
   * while the keeper recovers), but it must still learn at once that its calls now need permits;
   * else it calls freely until its next renewal (a quarter lease), and runs started right after the
   * PUT went past the budget (9 and 13 calls at once against 6).
   */
  @Test
  void anOperatorsBudgetOnAProviderWithoutOneReachesTheIdleNodesAtOnce() {
    BudgetBook book = running(ProviderBudget.NONE);
    List<Outgoing> out = book.set(new ProviderBudget(6, 0), "operator", now, AT);
    deliver(out);
    assertEquals(
        Set.of("a", "b"),
        out.stream().map(Outgoing::holderId).collect(java.util.stream.Collectors.toSet()),
        "every holder told");
    assertTrue(lastGrant.get("a").limited() && lastGrant.get("b").limited());
    assertEquals(0, granted("a") + granted("b"), "nothing granted before the nodes report");
  }
}

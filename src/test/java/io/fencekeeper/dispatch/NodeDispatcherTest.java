package io.fencekeeper.dispatch;

import static io.fencekeeper.testing.ScriptedItems.GET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.provider.budget.ThrottleShare;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.ScriptedItems;
import io.fencekeeper.worker.AttemptResult;
import io.fencekeeper.worker.WorkProtocol;
import io.fencekeeper.worker.WorkProtocol.RequestWork;
import io.fencekeeper.worker.WorkProtocol.Settled;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import io.fencekeeper.worker.WorkProtocol.WorkBatch;
import io.fencekeeper.worker.WorkProtocol.WorkOffer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One run's dispatcher on one node, between its node's shards ({@link ShardRows}, in memory), its
 * node's pool (a probe) and the coordinator (the reports): it hands out only the items of the
 * shards its node hosts, within its slice, pages shards that arrive first and forgets the ones that
 * leave, writes what settled before it reports it, and counts every item once.
 */
class NodeDispatcherTest {

  static final Duration WITHIN = Duration.ofSeconds(10);
  static final Duration LEASE = Duration.ofSeconds(30);

  static ActorTestKit testKit;
  static ExecutorService blocking;

  final ShardRows rows = new ShardRows();
  final ScriptedItems items = new ScriptedItems();
  final ReportLog reports = new ReportLog(rows);
  TestProbe<WorkBatch> pool;
  Duration lease = LEASE;
  Clock clock = Clock.systemUTC();

  @BeforeAll
  static void startNode() {
    testKit =
        ActorTestKit.create(
            ConfigFactory.parseMap(
                Map.of(
                    "pekko.actor.provider", "cluster",
                    "pekko.remote.artery.canonical.hostname", "127.0.0.1",
                    "pekko.remote.artery.canonical.port", 0,
                    "pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on")));
    Cluster cluster = Cluster.get(testKit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    Await.until(
        WITHIN, "the node to be up", () -> cluster.selfMember().status() == MemberStatus.up());
    blocking = Executors.newFixedThreadPool(2);
  }

  @AfterAll
  static void stopNode() {
    blocking.shutdownNow();
    testKit.shutdownTestKit();
  }

  @AfterEach
  void openTheWrites() {
    rows.openWrites();
  }

  // --- the run, the dispatcher and what it says --------------------------------------------------

  static RunWork run(int items, int resumes) {
    return new RunWork(
        "nightly/2026-11-29",
        "scope-1",
        "nightly",
        LocalDate.parse("2026-11-29"),
        items,
        3,
        null,
        Instant.now().plus(Duration.ofHours(1)),
        resumes);
  }

  ActorRef<ToDispatcher> dispatcher(RunWork run, int slice, Set<Integer> hosted, int workers) {
    pool = testKit.createTestProbe();
    ActorRef<DispatchProtocol.RunReport> reportTo =
        testKit.spawn(
            Behaviors.<DispatchProtocol.RunReport>receiveMessage(
                report -> {
                  reports.add(report);
                  return Behaviors.same();
                }));
    NodeDispatcher.Dependencies deps =
        new NodeDispatcher.Dependencies(
            clock, rows, items, new ItemShards(100), blocking, lease, lease.dividedBy(6), workers);
    return testKit.spawn(
        NodeDispatcher.create(
            run,
            new DispatchProtocol.Assignment(run, slice, false, List.of()),
            hosted,
            deps,
            reportTo));
  }

  ActorRef<ToDispatcher> dispatcher(int items, int slice, Set<Integer> hosted) {
    return dispatcher(run(items, 0), slice, hosted, 4);
  }

  WorkBatch ask(ActorRef<ToDispatcher> dispatcher, int max) {
    dispatcher.tell(new RequestWork(max, pool.getRef()));
    return pool.expectMessageClass(WorkBatch.class, WITHIN);
  }

  static List<Integer> seqs(WorkBatch batch) {
    return batch.offers().stream().map(WorkOffer::seq).toList();
  }

  /** Until a report shows a tally of every one of {@code shards}: their pages are in. */
  void awaitPaged(Integer... shards) {
    Await.until(
        WITHIN,
        "the pages of shards " + List.of(shards),
        () -> reports.latest().map(ReportLog::shardsOf).orElse(Set.of()),
        seen -> seen.containsAll(List.of(shards)));
  }

  DispatchProtocol.ShardTally awaitTally(DispatchProtocol.ShardTally expected) {
    return Await.until(
            WITHIN,
            "a report with " + expected,
            () -> reports.latest().flatMap(r -> ReportLog.tallyOf(r, expected.shard())),
            t -> t.equals(Optional.of(expected)))
        .orElseThrow();
  }

  // --- the tests --------------------------------------------------------------------------------

  @Test
  void handsOutNothingBeforeItKnowsTheShardsItsNodeHosts() {
    rows.add(2, 0, 1);
    ActorRef<ToDispatcher> dispatcher = dispatcher(2, 10, null);

    dispatcher.tell(new RequestWork(10, pool.getRef()));
    pool.expectNoMessage(Duration.ofMillis(600)); // two ticks
    assertEquals(List.of(), rows.pagedShards(), "nothing is paged either");

    dispatcher.tell(new NodeDispatcher.Hosted(Set.of(2)));

    assertEquals(List.of(0, 1), seqs(pool.expectMessageClass(WorkBatch.class, WITHIN)));
  }

  @Test
  void pagesAndHandsOutOnlyTheShardsItsNodeHosts() {
    rows.add(1, 0, 3, 6);
    rows.add(2, 1, 4, 7);
    rows.add(3, 2, 5, 8);
    RunWork run = run(9, 0);
    ActorRef<ToDispatcher> dispatcher = dispatcher(run, 100, Set.of(1, 3), 4);

    List<WorkOffer> offered = new ArrayList<>();
    WorkBatch batch = ask(dispatcher, 100);
    for (int i = 0; i < 5 && !batch.dry(); i++) {
      offered.addAll(batch.offers());
      batch = ask(dispatcher, 100);
    }

    assertEquals(
        Set.of(0, 2, 3, 5, 6, 8), new TreeSet<>(offered.stream().map(WorkOffer::seq).toList()));
    assertEquals(6, offered.size(), "each once");
    WorkOffer first = offered.get(0);
    assertEquals(run.itemId("acct-" + first.seq(), "c-1"), first.itemId());
    assertEquals(LEASE, first.lease());
    assertEquals(3, first.maxAttempts());
    assertEquals(Set.of(1, 3), Set.copyOf(rows.pagedShards()));
    assertTrue(batch.dry() && batch.offers().isEmpty() && !batch.finished(), batch.toString());
  }

  @Test
  void keepsAtMostItsSliceInFlight() {
    rows.add(1, 0, 1, 2, 3, 4);
    ActorRef<ToDispatcher> dispatcher = dispatcher(5, 2, Set.of(1));

    assertEquals(List.of(0, 1), seqs(ask(dispatcher, 10)));
    dispatcher.tell(new RequestWork(10, pool.getRef()));
    pool.expectNoMessage(Duration.ofMillis(500));

    dispatcher.tell(new Settled(0, new AttemptResult.Done()));
    assertEquals(List.of(2), seqs(pool.expectMessageClass(WorkBatch.class, WITHIN)));

    dispatcher.tell(new RequestWork(10, pool.getRef()));
    dispatcher.tell(new NodeDispatcher.Assigned(4, false, List.of()));
    assertEquals(
        List.of(3, 4),
        seqs(pool.expectMessageClass(WorkBatch.class, WITHIN)),
        "a larger slice serves the waiting request");
  }

  @Test
  void anAttemptLongerThanItsLeaseStaysInFlightWhileItsWorkerRenewsAndComesBackOnceNobodyDoes() {
    lease = Duration.ofSeconds(1); // an offer is silent after 1.2 s
    rows.add(1, 0, 1);
    ActorRef<ToDispatcher> dispatcher = dispatcher(2, 1, Set.of(1));
    WorkOffer first = ask(dispatcher, 1).offers().get(0);
    // its worker renews: the item answers a lease that runs a second from now
    items.answerNow(GET, item -> leased(item, Instant.now().plus(lease)));
    dispatcher.tell(new RequestWork(1, pool.getRef())); // waits: the slice of 1 is taken

    Await.until(
        WITHIN,
        "the silent offer's item asked about twice (kept in flight after the first answer)",
        () -> items.commandsTo(first.itemId()).stream().filter(c -> c.name().equals(GET)).count(),
        gets -> gets >= 2);
    pool.expectNoMessage(Duration.ofMillis(100));
    assertEquals(1, reports.latest().orElseThrow().inFlight(), "still counted in the slice");

    // its worker stopped renewing: the lease ran out, the offer comes back and is offered first
    items.answerNow(GET, item -> leased(item, Instant.now().minusSeconds(1)));
    assertEquals(List.of(first.seq()), seqs(pool.expectMessageClass(WorkBatch.class, WITHIN)));
  }

  static WorkItem.Reply leased(io.fencekeeper.item.ItemId item, Instant expiresAt) {
    ItemView leased = ScriptedItems.view(item, WorkItem.Status.LEASED, 1, EffectStatus.NONE);
    return new WorkItem.Accepted(
        new ItemView(
            leased.itemId(),
            leased.status(),
            leased.owner(),
            leased.token(),
            expiresAt,
            leased.attempt(),
            leased.maxAttempts(),
            leased.effect(),
            leased.effectOutcome(),
            leased.lastError(),
            leased.closedReason(),
            leased.retryAt(),
            leased.idempotencyKey()));
  }

  @Test
  void aShardThatLeavesTakesItsQueuedItemsWithIt() {
    rows.add(1, 0, 1, 2);
    rows.add(2, 3, 4, 5);
    ActorRef<ToDispatcher> dispatcher = dispatcher(6, 0, Set.of(1, 2));
    awaitPaged(1, 2);

    dispatcher.tell(new NodeDispatcher.Hosted(Set.of(1)));
    dispatcher.tell(new NodeDispatcher.Assigned(10, false, List.of()));

    assertEquals(List.of(0, 1, 2), seqs(ask(dispatcher, 10)));
    assertTrue(ask(dispatcher, 10).dry(), "shard 2's items went with it");
    Await.until(
        WITHIN,
        "a report of shard 1 alone",
        () -> reports.latest().map(ReportLog::shardsOf).orElse(Set.of()),
        Set.of(1)::equals);
  }

  @Test
  void aShardThatArrivesAfterAMemberWasLostIsPagedAndHandedOutFirst() {
    rows.add(1, 0, 1, 2);
    rows.add(2, 3, 4);
    ActorRef<ToDispatcher> dispatcher = dispatcher(5, 0, Set.of(1));
    awaitPaged(1);

    dispatcher.tell(new NodeDispatcher.MemberLost());
    dispatcher.tell(new NodeDispatcher.Hosted(Set.of(1, 2)));
    awaitPaged(1, 2);
    dispatcher.tell(new NodeDispatcher.Assigned(10, false, List.of()));

    assertEquals(
        List.of(3, 4, 0, 1, 2),
        seqs(ask(dispatcher, 10)),
        "its old node's leases may be due: its items go ahead of the backlog");
  }

  @Test
  void aNightsShardsAllocatedAfterItsDispatcherStartedArePagedAsTheQueueRunsLow() {
    int perShard = 3 * NodeDispatcher.PAGE;
    for (int seq = 0; seq < 2 * perShard; seq++) {
      rows.add(seq < perShard ? 1 : 2, seq);
    }
    // a fresh cluster: the dispatcher starts before its node hosts any shard of the night
    ActorRef<ToDispatcher> dispatcher = dispatcher(2 * perShard, 0, Set.of());
    dispatcher.tell(new NodeDispatcher.Hosted(Set.of(1, 2)));
    awaitPaged(1);
    int reported = reports.size();
    Await.until(WITHIN, "two reports after the first page", () -> reports.size() >= reported + 2);
    assertEquals(
        List.of(1),
        rows.pagedShards(),
        "one page is more than the low water: the night is not held in memory at once");

    dispatcher.tell(new NodeDispatcher.Assigned(NodeDispatcher.PAGE, false, List.of()));
    assertEquals(
        NodeDispatcher.PAGE - NodeDispatcher.LOW_WATER + 1,
        ask(dispatcher, NodeDispatcher.PAGE - NodeDispatcher.LOW_WATER + 1).offers().size());
    Await.until(
        WITHIN,
        "the next page once fewer than the low water are ready",
        rows::pagedShards,
        List.of(1, 1)::equals);
  }

  @Test
  void aShardThatArrivesFromALostNodeOffersTheLeasesThatNodeHeldFirst() {
    rows.add(1, 0, 1, 2);
    rows.add(2, 3, 4, 5, 6);
    ActorRef<ToDispatcher> dispatcher = dispatcher(7, 0, Set.of(1));
    awaitPaged(1);

    // the coordinator: the lost node last reported 5 and 6 in flight (and 9, of a shard elsewhere)
    dispatcher.tell(new NodeDispatcher.Assigned(10, false, List.of(5, 6, 9)));
    dispatcher.tell(new NodeDispatcher.Hosted(Set.of(1, 2)));
    awaitPaged(1, 2);

    assertEquals(
        List.of(5, 6, 3, 4, 0, 1, 2),
        seqs(ask(dispatcher, 10)),
        "the lost leases, then the rest of their shard, then the backlog");
  }

  @Test
  void anItemWhoseWaitEndsWithinTwoSecondsCountsInTheDemandItReports() {
    ManualClock stopped = new ManualClock(Instant.now());
    clock = stopped; // nothing becomes due while the test looks
    rows.add(1, 0, 1);
    ActorRef<ToDispatcher> dispatcher = dispatcher(2, 2, Set.of(1));
    assertEquals(List.of(0, 1), seqs(ask(dispatcher, 10)));

    // both leases held elsewhere: one ends in a second, the other in a minute
    dispatcher.tell(new Settled(0, new AttemptResult.Held(stopped.instant().plusSeconds(1))));
    dispatcher.tell(new Settled(1, new AttemptResult.Held(stopped.instant().plusSeconds(60))));

    Await.until(
        WITHIN,
        "a report with nothing in flight and the item due soon in its demand",
        () -> reports.latest(),
        report -> report.isPresent() && report.get().inFlight() == 0 && report.get().demand() == 1);
  }

  @Test
  void reportsTheSeqsItHasInFlight() {
    rows.add(1, 0, 1, 2);
    ActorRef<ToDispatcher> dispatcher = dispatcher(3, 2, Set.of(1));

    assertEquals(List.of(0, 1), seqs(ask(dispatcher, 10)));
    dispatcher.tell(new Settled(0, new AttemptResult.Done()));

    Await.until(
        WITHIN,
        "a report of the one item still in flight",
        () -> reports.latest().map(DispatchProtocol.RunReport::inFlightSeqs).orElse(List.of()),
        seqs -> seqs.equals(List.of(1)));
  }

  @Test
  void reportsTheProviderCallsThePoolsMadeForItsItemsEachOnce() {
    rows.add(1, 0);
    ActorRef<ToDispatcher> dispatcher = dispatcher(1, 1, Set.of(1));
    awaitPaged(1);

    dispatcher.tell(new WorkProtocol.CallsMade(new ThrottleShare.Calls(40, 3, 100)));
    dispatcher.tell(new WorkProtocol.CallsMade(new ThrottleShare.Calls(10, 1, 250)));
    int seen = reports.size();
    Await.until(WITHIN, "two reports after them", () -> reports.size() >= seen + 2);

    ThrottleShare.Calls reported =
        reports.all().stream()
            .map(DispatchProtocol.RunReport::calls)
            .reduce(ThrottleShare.Calls.NONE, ThrottleShare.Calls::plus);
    assertEquals(new ThrottleShare.Calls(50, 4, 250), reported, "added up, reported once");
  }

  @Test
  void writesWhatSettledBeforeTheReportThatCountsIt() {
    rows.add(1, 0, 1);
    ActorRef<ToDispatcher> dispatcher = dispatcher(2, 10, Set.of(1));
    assertEquals(List.of(0, 1), seqs(ask(dispatcher, 10)));
    TestProbe<DispatchProtocol.RunReport> counting = testKit.createTestProbe();
    reports.forwardCountingTo(counting.getRef());
    rows.holdWrites();

    dispatcher.tell(new Settled(0, new AttemptResult.Done()));
    dispatcher.tell(new Settled(1, new AttemptResult.Failed("permanent: unknown account")));
    Await.until(WITHIN, "a status write to begin", () -> rows.writesBegun() > 0);

    counting.expectNoMessage(Duration.ofMillis(1500)); // more than a report's second
    rows.openWrites();

    counting.expectMessageClass(DispatchProtocol.RunReport.class, WITHIN);
    awaitTally(new DispatchProtocol.ShardTally(1, 1, 1, 0, 0));
    assertEquals(
        List.of(),
        reports.aheadOfTheirWrites(),
        "no report counts a status run_item did not have when it arrived");
  }

  @Test
  void countsEachItemOnceInItsShardsTally() {
    rows.add(1, 0, 1, 2);
    ActorRef<ToDispatcher> dispatcher = dispatcher(3, 10, Set.of(1));
    assertEquals(List.of(0, 1, 2), seqs(ask(dispatcher, 10)));

    dispatcher.tell(new Settled(0, new AttemptResult.Done()));
    dispatcher.tell(new Settled(0, new AttemptResult.Done())); // a late repeat
    dispatcher.tell(new Settled(1, new AttemptResult.Failed("permanent")));
    dispatcher.tell(new Settled(1, new AttemptResult.Done())); // the item's truth, later
    dispatcher.tell(new Settled(2, new AttemptResult.Closed()));
    awaitTally(new DispatchProtocol.ShardTally(1, 2, 0, 1, 0));
    Await.until(WITHIN, "the statuses written", () -> rows.written().size() == 4);

    // the shard leaves and comes back: paged again from run_item, counted once still
    dispatcher.tell(new NodeDispatcher.Hosted(Set.of()));
    dispatcher.tell(new NodeDispatcher.Hosted(Set.of(1)));
    Await.until(WITHIN, "shard 1 paged again", () -> rows.pagedShards().size() == 2);
    int seen = reports.size();
    Await.until(WITHIN, "two reports after it", () -> reports.size() >= seen + 2);

    assertEquals(
        Optional.of(new DispatchProtocol.ShardTally(1, 2, 0, 1, 0)),
        ReportLog.tallyOf(reports.latest().orElseThrow(), 1));
    assertTrue(
        reports.all().stream()
            .flatMap(r -> r.shards().stream())
            .allMatch(t -> t.done() + t.failed() + t.closed() + t.quarantined() <= 3),
        "never more than the shard's three items: " + reports.all());
  }

  @Test
  void answersALocalRequestDryWhenNothingIsLeftToHandOutForNow() {
    rows.add(1, 0, 1);
    ActorRef<ToDispatcher> dispatcher = dispatcher(2, 10, Set.of(1));
    assertEquals(List.of(0, 1), seqs(ask(dispatcher, 10)));

    dispatcher.tell(new Settled(0, new AttemptResult.Done()));
    dispatcher.tell(
        new Settled(1, new AttemptResult.RetryAt(Instant.now().plus(Duration.ofHours(1)))));

    WorkBatch batch = ask(dispatcher, 10);
    assertTrue(batch.dry(), "its pool may steal meanwhile");
    assertEquals(List.of(), batch.offers());
    assertFalse(batch.finished(), "the run goes on: one item waits for its retry");
  }

  @Test
  void refusesAStealWhileItsOwnPoolTakesWorkAndServesItOtherwise() {
    rows.add(1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    ActorRef<ToDispatcher> dispatcher = dispatcher(10, 10, Set.of(1));
    awaitPaged(1);
    TestProbe<WorkBatch> thief = testKit.createTestProbe();

    dispatcher.tell(RequestWork.steal(2, thief.getRef()));
    assertEquals(2, thief.expectMessageClass(WorkBatch.class, WITHIN).offers().size());

    long asked = System.nanoTime();
    // its own pool asks, and a steal comes right behind (within the second, however slow the
    // machine: the two are handled one after the other)
    dispatcher.tell(new RequestWork(1, pool.getRef()));
    dispatcher.tell(RequestWork.steal(2, thief.getRef()));
    assertEquals(1, pool.expectMessageClass(WorkBatch.class, WITHIN).offers().size());
    WorkBatch refused = thief.expectMessageClass(WorkBatch.class, WITHIN);
    assertEquals(List.of(), refused.offers());
    assertFalse(refused.finished() || refused.dry(), refused.toString());

    WorkBatch served =
        Await.until(
            WITHIN,
            "a steal served once its pool has not asked for a second",
            () -> {
              dispatcher.tell(RequestWork.steal(2, thief.getRef()));
              return thief.expectMessageClass(WorkBatch.class, WITHIN);
            },
            b -> !b.offers().isEmpty());
    assertEquals(2, served.offers().size());
    assertTrue(System.nanoTime() - asked >= Duration.ofSeconds(1).toNanos());
  }

  @Test
  void stoppingAnswersOpenRequestsFinishedAndHandsOutNothingMore() {
    rows.add(1, 0, 1);
    ActorRef<ToDispatcher> dispatcher = dispatcher(2, 0, Set.of(1));
    awaitPaged(1);
    dispatcher.tell(new RequestWork(10, pool.getRef()));

    dispatcher.tell(new NodeDispatcher.Assigned(10, true, List.of()));

    WorkBatch open = pool.expectMessageClass(WorkBatch.class, WITHIN);
    assertTrue(open.finished() && open.offers().isEmpty(), open.toString());
    WorkBatch next = ask(dispatcher, 10);
    assertTrue(next.finished() && next.offers().isEmpty(), next.toString());
    TestProbe<WorkBatch> thief = testKit.createTestProbe();
    dispatcher.tell(RequestWork.steal(2, thief.getRef()));
    WorkBatch stolen = thief.expectMessageClass(WorkBatch.class, WITHIN);
    assertTrue(stolen.finished() && stolen.offers().isEmpty(), stolen.toString());
  }

  @Test
  void keepSliceLeavesTheSliceAsItWas() {
    rows.add(1, 0, 1, 2, 3, 4);
    ActorRef<ToDispatcher> dispatcher = dispatcher(5, 2, Set.of(1));

    dispatcher.tell(new NodeDispatcher.Assigned(DispatchProtocol.KEEP_SLICE, false, List.of()));

    assertEquals(2, ask(dispatcher, 10).offers().size());
    int seen = reports.size();
    Await.until(WITHIN, "a report after it", () -> reports.size() > seen);
    assertEquals(2, reports.latest().orElseThrow().slice());
    dispatcher.tell(new NodeDispatcher.Assigned(3, false, List.of()));
    assertEquals(List.of(2), seqs(ask(dispatcher, 10)));
  }

  @Test
  void aNewDispatcherToldToKeepItsSliceHasNoneUntilItIsGivenOne() {
    rows.add(1, 0, 1);
    ActorRef<ToDispatcher> dispatcher = dispatcher(2, DispatchProtocol.KEEP_SLICE, Set.of(1));
    awaitPaged(1);

    dispatcher.tell(new RequestWork(10, pool.getRef()));
    pool.expectNoMessage(Duration.ofMillis(500));
    assertEquals(0, reports.latest().orElseThrow().slice());

    dispatcher.tell(new NodeDispatcher.Assigned(1, false, List.of()));
    assertEquals(List.of(0), seqs(pool.expectMessageClass(WorkBatch.class, WITHIN)));
  }

  @Test
  void aResumedRunReopensWhatIsOpenAndNeverRedoesADoneItem() {
    rows.add(1, 0, 1, 2);
    rows.cache(1, ScopeRows.CLOSED);
    rows.cache(2, ScopeRows.DONE);
    // item 1 was closed by the deadline; its reopen finds it DONE (its holder completed first)
    items.answerNow(
        ScriptedItems.REOPEN,
        item ->
            ScriptedItems.accepted(
                item,
                item.accountId().equals("acct-1")
                    ? WorkItem.Status.DONE
                    : WorkItem.Status.PENDING));
    ActorRef<ToDispatcher> dispatcher = dispatcher(run(3, 1), 10, Set.of(1), 4);

    awaitTally(new DispatchProtocol.ShardTally(1, 2, 0, 0, 0));
    assertEquals(List.of(0), seqs(ask(dispatcher, 10)));
    assertEquals(
        List.of("acct-0", "acct-1"),
        items.commands().stream()
            .filter(c -> c.name().equals(ScriptedItems.REOPEN))
            .map(c -> c.item().accountId())
            .sorted()
            .toList(),
        "a DONE item is never reopened");
    assertTrue(ask(dispatcher, 10).dry());
  }
}

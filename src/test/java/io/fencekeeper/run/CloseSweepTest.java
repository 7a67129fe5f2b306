package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.dispatch.ScopeRows;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.KeepApart;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When a run stops, every item run_item does not show DONE, FAILED or CLOSED is closed, so no
 * worker still holding one can complete it; items already settled are left alone; an item that does
 * not answer is asked again until it is closed; each answer is written to run_item, where the final
 * count is read; and only then is the sweep finished.
 */
class CloseSweepTest {

  static final int ITEMS = 150;
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final Instant DEADLINE = Instant.parse("2026-11-30T06:00:00Z");
  static final Duration PATIENCE = Duration.ofSeconds(15);

  static ActorTestKit testKit;

  @TempDir Path dataDir;
  RunItemStore store;
  ExecutorService blocking;
  RecordingItems items;
  RunRecord run;

  @BeforeAll
  static void startTestKit() {
    testKit =
        ActorTestKit.create(
            FencekeeperNode.config(
                Map.of(
                    "pekko.actor.provider", "local",
                    "pekko.actor.serialize-messages", "off")));
  }

  @AfterAll
  static void stopTestKit() {
    testKit.shutdownTestKit();
  }

  @BeforeEach
  void stageTheScope() {
    TestDatabases.Target target = TestDatabases.h2File(dataDir);
    JournalDatabase db =
        new JournalDatabase(
            JournalDatabase.Kind.H2, target.url(), target.user(), target.password(), 2);
    db.migrate();
    store = new RunItemStore(db);
    List<AccountCursor> accounts = new ArrayList<>();
    for (int seq = 0; seq < ITEMS; seq++) {
      accounts.add(new AccountCursor("acct-" + seq, "c1"));
    }
    store.stage("scope-sweep", 0, accounts);
    RunRequest request =
        new RunRequest("nightly", DATE, new Scope.Inline(accounts), DEADLINE, 3, 10);
    run =
        new RunRecord(
            request,
            "scope-sweep",
            ITEMS,
            "digest",
            RunState.RUNNING,
            DEADLINE.minus(Duration.ofHours(4)),
            DEADLINE,
            null,
            null,
            null,
            false,
            0);
    blocking = Executors.newFixedThreadPool(2);
    items = new RecordingItems();
  }

  @AfterEach
  void closeStore() {
    blocking.shutdownNow();
    store.close();
  }

  @Test
  void closesExactlyTheItemsOpenAtTheStopRetryingOneThatDoesNotAnswerThenFinishes() {
    List<ScopeRows.StatusWrite> cached = new ArrayList<>();
    Set<Integer> open = new TreeSet<>();
    for (int seq = 0; seq < ITEMS; seq++) {
      if (seq % 5 == 0) {
        cached.add(new ScopeRows.StatusWrite(seq, ScopeRows.DONE));
      } else if (seq % 7 == 0) {
        cached.add(new ScopeRows.StatusWrite(seq, ScopeRows.FAILED));
      } else if (seq % 11 == 0) {
        cached.add(new ScopeRows.StatusWrite(seq, ScopeRows.CLOSED));
      } else {
        open.add(seq); // in flight, waiting, or never handed out: not terminal in run_item
      }
    }
    store.markStatuses("scope-sweep", cached);
    int stubborn = 101; // in the second page, with closed neighbours after it
    assertTrue(open.contains(stubborn));
    items.failFirst(itemAt(stubborn), 2);

    TestProbe<RunCoordinator.Command> coordinator = testKit.createTestProbe();
    testKit.spawn(CloseSweep.create(run, "deadline: passed", deps(), coordinator.ref()));

    coordinator.expectMessage(PATIENCE, new RunCoordinator.SweepFinished(run.runId(), 0));
    Map<Integer, Short> statuses = statuses();
    for (int seq : open) {
      assertEquals(ScopeRows.CLOSED, statuses.get(seq), "item " + seq + " closed, in run_item");
    }
    assertEquals(3, items.closeCalls(itemAt(stubborn)), "asked until it answered");
    assertEquals(
        open.stream().map(this::itemAt).collect(Collectors.toSet()),
        Set.copyOf(items.closedItems()),
        "no DONE, FAILED or CLOSED item was asked to close");
    assertEquals(Set.of("deadline: passed"), items.reasons());
    long done = cached.stream().filter(w -> w.status() == ScopeRows.DONE).count();
    long failed = cached.stream().filter(w -> w.status() == ScopeRows.FAILED).count();
    assertEquals(
        Map.of(
            ScopeRows.DONE,
            done,
            ScopeRows.FAILED,
            failed,
            ScopeRows.CLOSED,
            ITEMS - done - failed),
        store.statusCounts("scope-sweep"),
        "the final count reads each item once");
  }

  @Test
  void anItemThatTurnsOutDoneIsCountedDone() {
    List<ScopeRows.StatusWrite> cached = new ArrayList<>();
    for (int seq = 0; seq < ITEMS; seq++) {
      if (seq != 42) {
        cached.add(new ScopeRows.StatusWrite(seq, ScopeRows.DONE));
      }
    }
    store.markStatuses("scope-sweep", cached);
    items.answerDone(itemAt(42));

    TestProbe<RunCoordinator.Command> coordinator = testKit.createTestProbe();
    testKit.spawn(CloseSweep.create(run, "cancelled", deps(), coordinator.ref()));

    coordinator.expectMessage(PATIENCE, new RunCoordinator.SweepFinished(run.runId(), 0));
    assertEquals(ScopeRows.DONE, statuses().get(42));
    assertEquals(List.of(itemAt(42)), items.closedItems());
  }

  @Test
  void aRunWithNothingOpenFinishesWithoutClosingAnything() {
    List<ScopeRows.StatusWrite> cached = new ArrayList<>();
    for (int seq = 0; seq < ITEMS; seq++) {
      cached.add(new ScopeRows.StatusWrite(seq, seq % 2 == 0 ? ScopeRows.DONE : ScopeRows.FAILED));
    }
    store.markStatuses("scope-sweep", cached);

    TestProbe<RunCoordinator.Command> coordinator = testKit.createTestProbe();
    testKit.spawn(CloseSweep.create(run, "cancelled", deps(), coordinator.ref()));

    coordinator.expectMessage(PATIENCE, new RunCoordinator.SweepFinished(run.runId(), 0));
    assertEquals(List.of(), items.closedItems());
  }

  Map<Integer, Short> statuses() {
    return store.page("scope-sweep", 0, ITEMS).stream()
        .collect(Collectors.toMap(ScopeRows.Row::seq, ScopeRows.Row::status));
  }

  ItemId itemAt(int seq) {
    return run.itemId("acct-" + seq, "c1");
  }

  CloseSweep.Dependencies deps() {
    return new CloseSweep.Dependencies(store, items, blocking);
  }

  /**
   * Items that answer Close as the entity does (accepted, now CLOSED), except one that does not
   * answer the first times it is asked, and one that had already finished.
   */
  static final class RecordingItems implements ItemGateway {

    private final List<ItemId> closed = new ArrayList<>();
    private final Map<ItemId, Integer> calls = new ConcurrentHashMap<>();
    private final Set<String> reasons = ConcurrentHashMap.newKeySet();
    private volatile ItemId failing;
    private volatile int failures;
    private volatile ItemId done;

    void failFirst(ItemId item, int times) {
      failing = item;
      failures = times;
    }

    void answerDone(ItemId item) {
      done = item;
    }

    synchronized List<ItemId> closedItems() {
      return List.copyOf(closed);
    }

    int closeCalls(ItemId item) {
      return calls.getOrDefault(item, 0);
    }

    Set<String> reasons() {
      return Set.copyOf(reasons);
    }

    @Override
    public CompletionStage<Reply> close(ItemId item, String reason) {
      reasons.add(reason);
      int call = calls.merge(item, 1, Integer::sum);
      if (item.equals(failing) && call <= failures) {
        return CompletableFuture.failedFuture(new TimeoutException("the shard did not answer"));
      }
      synchronized (this) {
        closed.add(item);
      }
      WorkItem.Status status = item.equals(done) ? WorkItem.Status.DONE : WorkItem.Status.CLOSED;
      return CompletableFuture.completedFuture(new WorkItem.Accepted(view(item, status, reason)));
    }

    static ItemView view(ItemId item, WorkItem.Status status, String reason) {
      return new ItemView(
          item.value(),
          status,
          null,
          2,
          null,
          1,
          3,
          WorkItem.EffectStatus.NONE,
          null,
          null,
          status == WorkItem.Status.CLOSED ? reason : null,
          null,
          item.idempotencyKey());
    }

    @Override
    public CompletionStage<Reply> claim(
        ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keepApart) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public void claimAbandoned(ItemId item, String workerId) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> renew(ItemId item, String workerId, long token, Duration lease) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> recordEffect(
        ItemId item, String workerId, long token, EffectOutcome outcome) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> markAmbiguous(
        ItemId item, String workerId, long token, String reason) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> complete(ItemId item, String workerId, long token) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> recordEffectAndComplete(
        ItemId item, String workerId, long token, EffectOutcome outcome, int throttles) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> fail(
        ItemId item,
        String workerId,
        long token,
        String error,
        boolean retryable,
        Duration retryAfter,
        int throttles) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> release(ItemId item, String workerId, long token) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> reopen(ItemId item) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> retry(ItemId item) {
      throw new UnsupportedOperationException("the sweep only closes");
    }

    @Override
    public CompletionStage<Reply> get(ItemId item) {
      throw new UnsupportedOperationException("the sweep only closes");
    }
  }
}

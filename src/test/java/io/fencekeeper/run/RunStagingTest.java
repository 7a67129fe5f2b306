package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.dispatch.ScopeRows;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.run.scope.ScopeException;
import io.fencekeeper.run.scope.ScopeReader;
import io.fencekeeper.run.scope.ScopeSettings;
import io.fencekeeper.run.scope.ScopeSummary;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Staging a run's scope before the coordinator is asked, on a real run_item table (H2) with a
 * coordinator that answers as the real one would: every row is staged with its item's shard; a
 * second create of the same request joins the first instead of staging a second copy; another
 * request for the run while it stages, and a scope that fails validation, stage nothing.
 */
class RunStagingTest {

  static final Duration WITHIN = Duration.ofSeconds(30);
  static final Duration PATIENCE = Duration.ofSeconds(20);
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final Instant DEADLINE = Instant.now().plus(Duration.ofHours(3));

  @TempDir Path dataDir;
  RunItemStore store;
  StagingTable table;
  ExecutorService staging;
  ScheduledExecutorService timers;
  final ItemShards shards = new ItemShards(100);
  final Coordinator coordinator = new Coordinator();
  RunStaging runStaging;

  @BeforeEach
  void start() {
    store = new RunItemStore(TestDatabases.migrated(TestDatabases.h2File(dataDir)));
    table = new StagingTable(store.dataSource());
    staging = Executors.newCachedThreadPool();
    timers = Executors.newSingleThreadScheduledExecutor();
    runStaging =
        new RunStaging(
            store,
            table,
            new ScopeReader(ScopeSettings.in(dataDir.resolve("scopes")).withBatchSize(10)),
            coordinator,
            staging,
            timers,
            new RunStaging.Node("node-1", "uid-1"),
            row -> runStaging.runs(row.holder()),
            shards,
            20);
  }

  @AfterEach
  void stop() {
    coordinator.answer();
    timers.shutdownNow();
    staging.shutdownNow();
    store.close();
  }

  static RunRequest request(int accounts, int maxAttempts) {
    List<AccountCursor> scope = new ArrayList<>();
    for (int i = 0; i < accounts; i++) {
      scope.add(new AccountCursor("acct-" + i, "c-" + (i % 3)));
    }
    return new RunRequest("nightly", DATE, new Scope.Inline(scope), DEADLINE, maxAttempts, 5);
  }

  CreateOutcome create(RunRequest request) throws Exception {
    return runStaging
        .create(request, null, PATIENCE)
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS);
  }

  RunCoordinator.CreateReply replyOf(CreateOutcome outcome) {
    return assertInstanceOf(CreateOutcome.Answered.class, outcome).reply();
  }

  long rowsInRunItem() {
    try (Connection c = store.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM run_item")) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("counting run_item failed", e);
    }
  }

  @Test
  void aCreateStagesEveryRowWithItsItemsShardThenAsksTheCoordinator() throws Exception {
    RunRequest request = request(30, 3);

    RunCoordinator.CreateReply reply = replyOf(create(request));

    assertInstanceOf(RunCoordinator.Created.class, reply);
    Coordinator.Create asked = coordinator.creates.get(0);
    assertNotNull(asked.scopeId());
    assertEquals(30, asked.summary().count());
    List<Integer> shardsUsed = new ArrayList<>();
    int rows = 0;
    for (int shard = 0; shard < shards.numberOfShards(); shard++) {
      for (ScopeRows.Row row : store.pageShard(asked.scopeId(), shard, 0, 1000)) {
        assertEquals(
            shards.shardNumber(itemOf(request, row)), shard, "row " + row.seq() + "'s shard");
        shardsUsed.add(shard);
        rows++;
      }
    }
    assertEquals(30, rows);
    assertTrue(shardsUsed.stream().distinct().count() > 1, "spread over shards: " + shardsUsed);
    assertEquals(Optional.empty(), table.find(request.runId()), "its staging row is cleared");
  }

  static ItemId itemOf(RunRequest request, ScopeRows.Row row) {
    return ItemId.of(request.job(), request.businessDate(), row.accountId(), row.cursor());
  }

  @Test
  void aSecondCreateOfTheSameRequestJoinsTheFirstInsteadOfStagingAgain() throws Exception {
    RunRequest request = request(30, 3);
    coordinator.hold();
    CompletableFuture<CreateOutcome> first =
        runStaging.create(request, null, PATIENCE).toCompletableFuture();
    Await.until(WITHIN, "the first create staged", () -> coordinator.creates.size() == 1);

    int looked = coordinator.gets.get();
    CompletableFuture<CreateOutcome> second =
        runStaging.create(request, null, PATIENCE).toCompletableFuture();
    // a create that joins asks the coordinator again and again for the run it waits for
    Await.until(WITHIN, "the second create to wait", () -> coordinator.gets.get() >= looked + 2);
    // the first ends while the second looks: between its question to the coordinator (not yet)
    // and its look at the staging row (gone)
    coordinator.meanwhileNextGet(
        () -> {
          coordinator.answer();
          Await.until(WITHIN, "the first's row gone", () -> table.find(request.runId()).isEmpty());
        });

    assertInstanceOf(RunCoordinator.Created.class, replyOf(first.get(30, TimeUnit.SECONDS)));
    assertInstanceOf(RunCoordinator.AlreadyExists.class, replyOf(second.get(30, TimeUnit.SECONDS)));
    assertEquals(2, coordinator.creates.size());
    assertNull(coordinator.creates.get(1).scopeId(), "the second staged nothing of its own");
    assertEquals(30, rowsInRunItem(), "one copy of the scope");
  }

  @Test
  void anotherRequestForTheRunWhileItStagesIsAConflictAndStagesNothing() throws Exception {
    coordinator.hold();
    CompletableFuture<CreateOutcome> first =
        runStaging.create(request(30, 3), null, PATIENCE).toCompletableFuture();
    Await.until(WITHIN, "the first create staged", () -> coordinator.creates.size() == 1);

    RunCoordinator.CreateReply reply = replyOf(create(request(30, 4)));

    RunCoordinator.Conflict conflict = assertInstanceOf(RunCoordinator.Conflict.class, reply);
    assertTrue(conflict.message().contains("maxAttempts (3 vs 4)"), conflict.message());
    assertEquals(1, coordinator.creates.size(), "the coordinator was not asked");
    assertEquals(30, rowsInRunItem(), "nothing staged for it");
    coordinator.answer();
    assertInstanceOf(RunCoordinator.Created.class, replyOf(first.get(30, TimeUnit.SECONDS)));
  }

  @Test
  void aCreateOfARunThatExistsIsComparedWithoutStagingAgain() throws Exception {
    replyOf(create(request(30, 3)));

    RunCoordinator.CreateReply reply = replyOf(create(request(30, 4)));

    assertInstanceOf(RunCoordinator.Conflict.class, reply);
    assertNull(coordinator.creates.get(1).scopeId());
    assertEquals(30, coordinator.creates.get(1).summary().count(), "compared by digest");
    assertEquals(30, rowsInRunItem());
  }

  @Test
  void aScopeThatFailsValidationStagesNothing() throws Exception {
    List<AccountCursor> accounts =
        new ArrayList<>(((Scope.Inline) request(30, 3).scope()).accounts());
    accounts.add(new AccountCursor("acct-4", "c-1")); // a repeat, in the fourth batch of ten
    RunRequest request =
        new RunRequest("nightly", DATE, new Scope.Inline(accounts), DEADLINE, 3, 5);

    ExecutionException failure = assertThrows(ExecutionException.class, () -> create(request));

    ScopeException invalid = assertInstanceOf(ScopeException.class, rootOf(failure));
    assertEquals(List.of("accounts[30]: duplicate of accounts[4]"), invalid.problems());
    assertEquals(List.of(), coordinator.creates, "the coordinator was not asked");
    Await.until(WITHIN, "the staged batches discarded", () -> rowsInRunItem() == 0);
    Await.until(WITHIN, "the staging row cleared", () -> table.find(request.runId()).isEmpty());
  }

  static Throwable rootOf(Throwable failure) {
    Throwable t = failure;
    while (t.getCause() != null && !(t instanceof ScopeException)) {
      t = t.getCause();
    }
    return t;
  }

  /**
   * The coordinator as staging sees it: it knows a run once it has created it, answers a create of
   * a known run by comparing the requests, and may be held (slow) until the test lets it answer.
   */
  static final class Coordinator implements RunStaging.Coordinator {

    record Create(RunRequest request, String scopeId, ScopeSummary summary) {}

    final List<Create> creates = new CopyOnWriteArrayList<>();
    final AtomicInteger gets = new AtomicInteger();
    private final AtomicReference<Runnable> meanwhile = new AtomicReference<>();
    private final Map<String, RunRecord> known = new ConcurrentHashMap<>();
    private volatile CompletableFuture<Void> answers = CompletableFuture.completedFuture(null);

    void hold() {
      answers = new CompletableFuture<>();
    }

    void answer() {
      answers.complete(null);
    }

    /**
     * The next {@link #get} answers what was known when it was asked, once {@code meanwhile} has
     * run: the coordinator's answer is on its way while the world moves on.
     */
    void meanwhileNextGet(Runnable meanwhile) {
      this.meanwhile.set(meanwhile);
    }

    @Override
    public CompletionStage<Optional<RunView>> get(String runId) {
      gets.incrementAndGet();
      Optional<RunView> now =
          Optional.ofNullable(known.get(runId)).map(r -> RunView.of(r, null, RunSignals.NONE));
      Runnable then = meanwhile.getAndSet(null);
      if (then != null) {
        then.run();
      }
      return CompletableFuture.completedFuture(now);
    }

    @Override
    public CompletionStage<RunCoordinator.CreateReply> create(
        RunRequest request, String scopeId, ScopeSummary summary) {
      creates.add(new Create(request, scopeId, summary));
      return answers.thenApply(
          ignored -> {
            RunRecord existing = known.get(request.runId());
            if (existing == null) {
              RunRecord created =
                  RunRecord.created(
                      request, scopeId, summary.count(), summary.digest(), Instant.now());
              known.put(request.runId(), created);
              return new RunCoordinator.Created(RunView.of(created, null, RunSignals.NONE));
            }
            RunView view = RunView.of(existing, null, RunSignals.NONE);
            List<String> differences = existing.request().differencesFrom(request);
            return differences.isEmpty() && existing.scopeDigest().equals(summary.digest())
                ? new RunCoordinator.AlreadyExists(view)
                : new RunCoordinator.Conflict("differs: " + differences, view);
          });
    }
  }
}

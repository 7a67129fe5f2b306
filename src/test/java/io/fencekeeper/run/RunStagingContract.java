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
import io.fencekeeper.run.scope.ScopeSink;
import io.fencekeeper.run.scope.ScopeSummary;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
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
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Staging a run's scope before the coordinator is asked, on a real run_item table with a
 * coordinator that answers as the real one would, run on H2 and on PostgreSQL (where steps go in by
 * COPY): every row is staged with its item's shard; a second create of the same request joins the
 * first instead of staging a second copy; another request for the run while it stages, and a scope
 * that fails validation, stage nothing. A staging whose node died goes on from its last committed
 * step on another node, which a stager that was only paused cannot disturb; one staged in full is
 * created from its rows; an upload cut off is marked FAILED, saying to send it again.
 */
abstract class RunStagingContract {

  /** The database the run tables are on. */
  abstract TestDatabases.Target database(Path dataDir);

  static final Duration WITHIN = Duration.ofSeconds(30);
  static final Duration PATIENCE = Duration.ofSeconds(20);
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final Instant DEADLINE = Instant.now().plus(Duration.ofHours(3));

  /** Rows per committed step: the scopes here take several. */
  static final int STEP_ROWS = 20;

  @TempDir Path dataDir;
  RunItemStore store;
  StagingTable table;
  ExecutorService staging;
  ScheduledExecutorService timers;
  final ItemShards shards = new ItemShards(100);
  final Coordinator coordinator = new Coordinator();
  final List<ExecutorService> pools = new CopyOnWriteArrayList<>();
  RunStaging runStaging;

  @BeforeEach
  void start() {
    store = new RunItemStore(TestDatabases.migrated(database(dataDir)));
    table = new StagingTable(store.dataSource());
    staging = pool(Executors.newCachedThreadPool());
    timers = pool(Executors.newSingleThreadScheduledExecutor());
    runStaging = node("node-1", dataDir.resolve("scopes"), coordinator, staging, timers);
  }

  @AfterEach
  void stop() {
    coordinator.answer();
    pools.forEach(ExecutorService::shutdownNow);
    store.close();
  }

  <T extends ExecutorService> T pool(T pool) {
    pools.add(pool);
    return pool;
  }

  /**
   * A node's staging on the shared tables, with its own scope directory; the other nodes of this
   * test are gone (they left the cluster), so only a holder it runs itself is at work.
   */
  RunStaging node(
      String name,
      Path scopeDir,
      RunStaging.Coordinator coordinator,
      ExecutorService threads,
      ScheduledExecutorService timers) {
    return node(name, scopeDir, coordinator, threads, timers, store, 10, STEP_ROWS);
  }

  /** As above, on the run tables of {@code store}, reading {@code batch} and staging steps. */
  RunStaging node(
      String name,
      Path scopeDir,
      RunStaging.Coordinator coordinator,
      ExecutorService threads,
      ScheduledExecutorService timers,
      RunItemStore store,
      int batch,
      int stepRows) {
    RunStaging[] self = new RunStaging[1];
    self[0] =
        new RunStaging(
            store,
            new StagingTable(store.dataSource()),
            new ScopeReader(ScopeSettings.in(scopeDir).withBatchSize(batch)),
            coordinator,
            threads,
            timers,
            new RunStaging.Node(name, "uid-" + name),
            row -> ("uid-" + name).equals(row.incarnation()) && self[0].runs(row.holder()),
            shards,
            stepRows,
            Clock.systemUTC());
    return self[0];
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
    return count("SELECT COUNT(*) FROM run_item");
  }

  /** Accounts staged more than once under one scope: none, ever. */
  long accountsStagedTwice() {
    return count(
        "SELECT COUNT(*) FROM (SELECT scope_id, account_id, provider_cursor FROM run_item"
            + " GROUP BY scope_id, account_id, provider_cursor HAVING COUNT(*) > 1) twice");
  }

  long count(String sql) {
    try (Connection c = store.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("counting failed: " + sql, e);
    }
  }

  /** The stager of {@code runId} has not been heard of for an hour, as after its node died. */
  void ageTheHeartbeat(String runId) throws SQLException {
    try (Connection c = store.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE run_staging SET updated_at = updated_at - INTERVAL '1' HOUR"
                    + " WHERE run_id = ?")) {
      ps.setString(1, runId);
      assertEquals(1, ps.executeUpdate());
    }
  }

  StagingTable.Row stagingRow(String runId) {
    return table.find(runId).orElseThrow(() -> new AssertionError("no staging row of " + runId));
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

  @Test
  void repeatsAreNamedWithTheirFirstOccurrenceWhereverItWasStagedAndNothingStays()
      throws Exception {
    List<AccountCursor> accounts = new ArrayList<>(accounts(50));
    accounts.add(new AccountCursor("acct-4", "c-1")); // first staged two steps earlier
    accounts.add(new AccountCursor("acct-44", "c-2")); // first in this very step
    RunRequest request =
        new RunRequest("nightly", DATE, new Scope.Inline(accounts), DEADLINE, 3, 5);

    ExecutionException failure = assertThrows(ExecutionException.class, () -> create(request));

    ScopeException invalid = assertInstanceOf(ScopeException.class, rootOf(failure));
    assertEquals(
        List.of(
            "accounts[50]: duplicate of accounts[4]", "accounts[51]: duplicate of accounts[44]"),
        invalid.problems());
    assertEquals(List.of(), coordinator.creates, "the coordinator was not asked");
    Await.until(WITHIN, "the staged steps discarded", () -> rowsInRunItem() == 0);
    Await.until(WITHIN, "the staging row cleared", () -> table.find(request.runId()).isEmpty());
  }

  /**
   * Node 1 claimed a run of a file and committed two steps of it (rows 0 to 39), held ten more rows
   * and died, as a node does mid-file. Node 2, whose copy of the file has blank lines node 1's has
   * not (the same accounts, other line numbers), takes the staging over and goes on from node 1's
   * last step: the rows node 1 committed keep their line numbers. When node 1 wakes (it was only
   * frozen) and writes its next step, the step is refused: one run, every account once.
   */
  @Test
  void aStagingWhoseNodeDiedGoesOnFromItsLastStepElsewhereAndItsFrozenStagerChangesNothing()
      throws Exception {
    List<AccountCursor> accounts = accounts(100);
    Path dirTwo = Files.createDirectories(dataDir.resolve("scopes-2"));
    Files.writeString(dirTwo.resolve("accounts.csv"), "accountId,cursor\n\n\n\n" + lines(accounts));
    RunRequest request =
        new RunRequest("nightly", DATE, new Scope.Csv("accounts.csv"), DEADLINE, 3, 5);
    StagingTable.Claim one =
        new StagingTable.Claim(
            request.runId(),
            "scope-of-node-1",
            "holder-1",
            StagingRows.requestDigest(request),
            request,
            StagingRows.requestJson(request),
            "csv",
            "node-1",
            "uid-node-1");
    assertTrue(table.insert(one));
    StagedScope stepsOfOne =
        new StagedScope(
            store,
            table,
            one,
            RunStaging.shardOf(shards, request),
            new StagingRetry(DEADLINE, Clock.systemUTC(), fault -> {}),
            () -> false,
            ScopeSink.ReadSoFar.NOTHING,
            staging,
            STEP_ROWS);
    stepsOfOne.stage(lines(accounts, 0, 20), soFar(accounts, 20));
    stepsOfOne.stage(lines(accounts, 20, 40), soFar(accounts, 40));
    stepsOfOne.stage(lines(accounts, 40, 50), soFar(accounts, 50));
    Await.until(
        WITHIN,
        "node 1's first two steps committed",
        () -> stagingRow(request.runId()).nextSeq() == 40);
    ageTheHeartbeat(request.runId()); // node 1 is heard of no more
    RunStaging two = node("node-2", dirTwo, coordinator, staging, timers);

    two.resumeInterrupted();

    Await.until(WITHIN, "the run created", () -> coordinator.creates.size() == 1);
    Coordinator.Create created = coordinator.creates.get(0);
    assertEquals("scope-of-node-1", created.scopeId());
    assertEquals(100, created.summary().count());
    assertEquals(digestOf(accounts), created.summary().digest());
    Await.until(WITHIN, "the staging row cleared", () -> table.find(request.runId()).isEmpty());
    assertEquals(100, rowsInRunItem());
    assertEquals(0, accountsStagedTwice());
    assertEquals(2, lineOf(created.scopeId(), 0), "node 1's rows were kept, not staged again");
    assertEquals(45, lineOf(created.scopeId(), 40), "node 2 staged the rest from its own file");

    stepsOfOne.stage(lines(accounts, 50, 60), soFar(accounts, 60)); // node 1 wakes
    assertThrows(StagingLost.class, () -> stepsOfOne.finish(soFar(accounts, 60)));
    assertEquals(1, coordinator.creates.size(), "node 1 asked nothing");
    assertEquals(100, rowsInRunItem(), "node 1 wrote nothing more");
    assertEquals(0, accountsStagedTwice());
  }

  /** Accounts {@code [from, to)} as a reader hands them on, each from its line of the file. */
  static List<ScopeSink.Positioned> lines(List<AccountCursor> accounts, int from, int to) {
    List<ScopeSink.Positioned> batch = new ArrayList<>();
    for (int i = from; i < to; i++) {
      batch.add(new ScopeSink.Positioned(i + 2, accounts.get(i)));
    }
    return batch;
  }

  /** The read after the first {@code n} accounts, as the reader says it. */
  ScopeSink.ReadSoFar soFar(List<AccountCursor> accounts, int n) {
    return new ScopeSink.ReadSoFar(n, digestOf(accounts.subList(0, n)), true);
  }

  /**
   * An upload staged in full was answered (STAGING): its node dies before the coordinator answers.
   * Another node creates the run from the rows; nothing acknowledged is lost.
   */
  @Test
  void anUploadStagedInFullWhoseNodeDiedIsCreatedFromItsRowsElsewhere() throws Exception {
    List<AccountCursor> accounts = accounts(70);
    Coordinator unanswering = new Coordinator();
    unanswering.hold();
    ScheduledExecutorService timersOne = pool(Executors.newSingleThreadScheduledExecutor());
    RunStaging one =
        node("node-1", dataDir, unanswering, pool(Executors.newCachedThreadPool()), timersOne);
    RunRequest request = upload("uploaded");

    CreateOutcome told =
        one.create(request, csv(accounts), Duration.ofMillis(100))
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    assertInstanceOf(CreateOutcome.StillStaging.class, told, "answered once staged in full");
    Await.until(WITHIN, "node 1 to ask its coordinator", () -> unanswering.creates.size() == 1);
    timersOne.shutdownNow();
    ageTheHeartbeat(request.runId());
    node("node-2", dataDir, coordinator, staging, timers).resumeInterrupted();

    Await.until(WITHIN, "the run created", () -> coordinator.creates.size() == 1);
    Coordinator.Create created = coordinator.creates.get(0);
    assertEquals(unanswering.creates.get(0).scopeId(), created.scopeId(), "from node 1's rows");
    assertEquals(70, created.summary().count());
    assertEquals(digestOf(accounts), created.summary().digest());
    Await.until(WITHIN, "the staging row cleared", () -> table.find(request.runId()).isEmpty());
    assertEquals(70, rowsInRunItem());
  }

  /**
   * An upload is cut off half-way when its node dies: its client had no answer, and its body is
   * gone. The run says so (FAILED, send the upload again), its rows are discarded, and the upload
   * sent again is staged from the first row.
   */
  @Test
  void anUploadCutOffByItsNodesDeathIsMarkedFailedSayingToSendItAgain() throws Exception {
    List<AccountCursor> accounts = accounts(100);
    PipedOutputStream client = new PipedOutputStream();
    PipedInputStream body = new PipedInputStream(client, 1 << 20);
    ScheduledExecutorService timersOne = pool(Executors.newSingleThreadScheduledExecutor());
    RunStaging one =
        node("node-1", dataDir, coordinator, pool(Executors.newCachedThreadPool()), timersOne);
    RunRequest request = upload("cut-off");
    CompletableFuture<CreateOutcome> unanswered =
        one.create(request, body, PATIENCE).toCompletableFuture();
    client.write(
        ("accountId,cursor\n" + lines(accounts.subList(0, 50))).getBytes(StandardCharsets.UTF_8));
    client.flush();
    Await.until(
        WITHIN,
        "node 1's first two steps committed",
        () -> table.find(request.runId()).map(r -> r.nextSeq() == 40).orElse(false));
    timersOne.shutdownNow();
    ageTheHeartbeat(request.runId());
    RunStaging two = node("node-2", dataDir, coordinator, staging, timers);

    two.resumeInterrupted();

    RunView shown = StagingRows.view(stagingRow(request.runId()));
    assertEquals(RunState.FAILED, shown.state());
    assertTrue(shown.endReason().contains("send the upload again"), shown.endReason());
    assertEquals(0, rowsInRunItem(), "nothing of it kept");
    client.close(); // node 1 wakes: its last step is refused
    ExecutionException stopped =
        assertThrows(ExecutionException.class, () -> unanswered.get(30, TimeUnit.SECONDS));
    assertInstanceOf(StagingLost.class, StagingRows.unwrap(stopped));
    assertEquals(0, rowsInRunItem());

    CreateOutcome again =
        two.create(request, csv(accounts), PATIENCE)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);

    assertInstanceOf(RunCoordinator.Created.class, replyOf(again));
    assertEquals(100, rowsInRunItem());
  }

  /**
   * The coordinator created the run, but no answer came back before the run's deadline: the staging
   * gives up, and finds the run there. Its rows are the run's items: they stay.
   */
  @Test
  void aStagingThatGaveUpWaitingForTheCoordinatorKeepsTheRowsOfARunItCreated() throws Exception {
    coordinator.loseAnswers = true;
    RunRequest soon =
        new RunRequest(
            "nightly",
            DATE,
            new Scope.Inline(accounts(30)),
            Instant.now().plus(Duration.ofSeconds(3)),
            3,
            5);

    ExecutionException gaveUp = assertThrows(ExecutionException.class, () -> create(soon));

    assertInstanceOf(StagingRetry.GaveUp.class, StagingRows.unwrap(gaveUp));
    assertEquals(30, rowsInRunItem(), "the created run's items");
    assertTrue(table.find(soon.runId()).isEmpty(), "the staging row cleared");
  }

  static List<AccountCursor> accounts(int n) {
    return ((Scope.Inline) request(n, 3).scope()).accounts();
  }

  static RunRequest upload(String job) {
    return new RunRequest(job, DATE, new Scope.Upload(), DEADLINE, 3, 5);
  }

  static String lines(List<AccountCursor> accounts) {
    StringBuilder text = new StringBuilder();
    accounts.forEach(a -> text.append(a.accountId()).append(',').append(a.cursor()).append('\n'));
    return text.toString();
  }

  static InputStream csv(List<AccountCursor> accounts) {
    return new ByteArrayInputStream(
        ("accountId,cursor\n" + lines(accounts)).getBytes(StandardCharsets.UTF_8));
  }

  String digestOf(List<AccountCursor> accounts) {
    return new ScopeReader(ScopeSettings.in(dataDir.resolve("scopes")))
        .read(new Scope.Inline(accounts), ScopeSink.digestOnly())
        .digest();
  }

  long lineOf(String scopeId, int seq) {
    return count(
        "SELECT source_position FROM run_item WHERE scope_id = '" + scopeId + "' AND seq = " + seq);
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
    volatile boolean loseAnswers;

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
      CompletionStage<RunCoordinator.CreateReply> reply =
          answers.thenApply(ignored -> createOrCompare(request, scopeId, summary));
      // the answer was lost on its way: the run may exist all the same
      return loseAnswers
          ? reply.thenCompose(
              done -> CompletableFuture.failedFuture(new TimeoutException("the answer was lost")))
          : reply;
    }

    private RunCoordinator.CreateReply createOrCompare(
        RunRequest request, String scopeId, ScopeSummary summary) {
      RunRecord existing = known.get(request.runId());
      if (existing == null) {
        RunRecord created =
            RunRecord.created(request, scopeId, summary.count(), summary.digest(), Instant.now());
        known.put(request.runId(), created);
        return new RunCoordinator.Created(RunView.of(created, null, RunSignals.NONE));
      }
      RunView view = RunView.of(existing, null, RunSignals.NONE);
      List<String> differences = existing.request().differencesFrom(request);
      return differences.isEmpty() && existing.scopeDigest().equals(summary.digest())
          ? new RunCoordinator.AlreadyExists(view)
          : new RunCoordinator.Conflict("differs: " + differences, view);
    }
  }
}

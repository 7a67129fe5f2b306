package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.RunCoordinator.ControlAccepted;
import io.fencekeeper.run.RunCoordinator.ControlRefused;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.ScriptedItems;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The run coordinator as its callers see it, beyond the rules {@link RunRulesTest} holds: a created
 * run is answered again for the same request and a conflict for another, nothing is held for a
 * request without a staged scope; a coordinator that restarts from its journal holds its runs and
 * the operator's governor; a cancelled run and a run past its deadline (by the coordinator's clock)
 * end, are filed and are answered from their record; a filed run is resumed and held again, across
 * a restart; retention may prune only a run the coordinator does not hold, and a pruned run is not
 * resumed.
 *
 * <p>One coordinator actor on an H2 journal, in a node that is no cluster member and hosts no
 * items: the items are scripted (they answer a close as a healthy item would), the runs' rows are
 * staged in {@code run_item}, and the clock is the test's.
 */
class RunCoordinatorTest {

  static final Duration WITHIN = Duration.ofSeconds(30);
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final AtomicInteger JOBS = new AtomicInteger();
  static final GovernorSettings DEFAULTS = GovernorSettings.defaults().withCaps(16, 16, 1);

  static ActorTestKit testKit;
  static RunItemStore store;
  static EndedRuns ended;
  static ExecutorService blocking;
  static final ManualClock clock = ManualClock.at("2026-11-30T01:00:00Z");
  static final ItemShards shards = new ItemShards(4);
  ScriptedItems items;
  ActorRef<RunCoordinator.Command> coordinator;

  @BeforeAll
  static void startNode() throws Exception {
    JournalDatabase journal =
        TestDatabases.migrated(
            TestDatabases.h2File(Files.createTempDirectory("fencekeeper-run-coordinator")));
    testKit =
        ActorTestKit.create(
            "RunCoordinatorTest",
            journal
                .pekkoConfig()
                .withFallback(
                    FencekeeperNode.config(
                        Map.of(
                            "pekko.remote.artery.canonical.port", 0,
                            "pekko.loglevel", "WARNING",
                            "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off"))));
    store = new RunItemStore(journal);
    ended =
        EndedRuns.on(
            store,
            JacksonObjectMapperProvider.get(Adapter.toClassic(testKit.system()))
                .getOrCreate("jackson-json", Optional.empty()));
    blocking = Executors.newFixedThreadPool(2);
  }

  @AfterAll
  static void stopNode() {
    testKit.shutdownTestKit();
    blocking.shutdownNow();
    store.close();
  }

  @BeforeEach
  void startCoordinator() {
    items = new ScriptedItems();
    coordinator = testKit.spawn(RunCoordinator.create(deps()));
  }

  @AfterEach
  void stopCoordinator() {
    testKit.stop(coordinator, WITHIN);
  }

  RunCoordinator.Dependencies deps() {
    return new RunCoordinator.Dependencies(
        clock,
        store,
        ended,
        items,
        shards,
        blocking,
        DEFAULTS,
        new FleetPolicy.Settings(1, 10, 8, DEFAULTS.deadlineMargin()),
        Optional.empty());
  }

  /** Stops the coordinator and starts another on the same journal, as a failover would. */
  void restartCoordinator() {
    testKit.stop(coordinator, WITHIN);
    coordinator = testKit.spawn(RunCoordinator.create(deps()));
  }

  // --- the tests

  @Test
  void aCreatedRunIsAnsweredAgainForTheSameRequestAndAConflictForAnother() {
    RunRequest request = request(job(), 4);
    RunView created =
        assertInstanceOf(RunCoordinator.Created.class, create(stage(request), "digest")).run();

    RunView again =
        assertInstanceOf(RunCoordinator.AlreadyExists.class, create(stage(request), "digest"))
            .run();
    RunCoordinator.Conflict otherAccounts =
        assertInstanceOf(RunCoordinator.Conflict.class, create(stage(request), "other-digest"));
    RunCoordinator.Conflict otherDeadline =
        assertInstanceOf(
            RunCoordinator.Conflict.class,
            create(stage(withDeadline(request, request.deadline().plusSeconds(60))), "digest"));

    assertEquals(RunState.RUNNING, created.state());
    assertEquals(4, created.counts().total());
    assertEquals(created.createdAt(), again.createdAt(), "the run created first, not a new one");
    assertTrue(otherAccounts.message().contains("scope contents"), otherAccounts.message());
    assertTrue(otherDeadline.message().contains("deadline"), otherDeadline.message());
    assertEquals(request.deadline(), otherDeadline.existing().deadline(), "it names the run held");
    assertEquals(request.deadline(), get(request.runId()).deadline(), "a conflict changes nothing");
  }

  @Test
  void aRequestWithoutAStagedScopeIsRefusedAndNothingIsHeld() {
    RunRequest request = request(job(), 2);

    RunCoordinator.Conflict refused =
        assertInstanceOf(
            RunCoordinator.Conflict.class,
            this.<RunCoordinator.CreateReply>ask(
                r -> new RunCoordinator.CreateRun(request, null, 2, "digest", r)));

    assertEquals(
        "run " + request.runId() + " has no staged scope; create it again", refused.message());
    assertNull(refused.existing());
    assertNull(get(request.runId()));
  }

  @Test
  void aRestartedCoordinatorHoldsItsRunsAndTheOperatorsGovernor() {
    RunRequest request = request(job(), 3);
    RunView created =
        assertInstanceOf(RunCoordinator.Created.class, create(stage(request), "digest")).run();
    GovernorSettings operators = GovernorSettings.defaults().withCaps(7, 9, 1);
    this.<RunCoordinator.GovernorReply>ask(r -> new RunCoordinator.SetGovernor(operators, r));

    restartCoordinator();

    RunView held = get(request.runId());
    assertEquals(RunState.RUNNING, held.state());
    assertEquals(created.createdAt(), held.createdAt());
    assertEquals(created.deadline(), held.deadline());
    assertEquals(
        operators,
        this.<RunCoordinator.GovernorReply>ask(RunCoordinator.GetGovernor::new).settings());
    assertInstanceOf(RunCoordinator.AlreadyExists.class, create(stage(request), "digest"));
  }

  @Test
  void aCancelledRunEndsCancelledIsFiledAndIsAnsweredFromItsRecord() {
    RunRequest request = request(job(), 3);
    create(stage(request), "digest");

    RunView cancelling =
        assertInstanceOf(ControlAccepted.class, control(cancel(request.runId()))).run();
    awaitFiled(request.runId());

    assertEquals(RunState.RUNNING, cancelling.state(), "the cancel is accepted, the end follows");
    RunView filed =
        assertInstanceOf(RunCoordinator.AlreadyExists.class, create(stage(request), "digest"))
            .run();
    assertEquals(RunState.CANCELLED, filed.state(), "a create names the run, it does not rerun it");
    assertEquals("cancelled", filed.endReason());
    assertEquals(3, filed.counts().closed(), "the items open at the cancel were closed");
    assertEquals("run_ended", refusal(control(cancel(request.runId()))));
  }

  @Test
  void aFiledRunIsResumedWithAFutureDeadlineAndHeldAgainAcrossARestart() {
    RunRequest request = request(job(), 2);
    create(stage(request), "digest");
    control(cancel(request.runId()));
    awaitFiled(request.runId());

    assertEquals(
        "invalid_deadline", refusal(control(resume(request.runId(), clock.instant()))), "now");
    Instant later = clock.instant().plus(Duration.ofHours(6));
    RunView resumed =
        assertInstanceOf(ControlAccepted.class, control(resume(request.runId(), later))).run();
    restartCoordinator();

    assertEquals(RunState.RUNNING, resumed.state());
    assertEquals(1, resumed.resumes());
    RunView held = get(request.runId());
    assertEquals(RunState.RUNNING, held.state(), "held again, and after a restart");
    assertEquals(later, held.deadline());
    assertEquals(1, held.resumes());
  }

  @Test
  void aRunPastItsDeadlineByTheCoordinatorsClockEndsAndIsFiled() {
    RunRequest request = request(job(), 2);
    create(stage(request), "digest");

    clock.advance(Duration.between(clock.instant(), request.deadline()));
    awaitFiled(request.runId());

    RunView ended =
        assertInstanceOf(RunCoordinator.AlreadyExists.class, create(stage(request), "digest"))
            .run();
    assertEquals(RunState.FAILED, ended.state(), "no item was done by the deadline");
    assertEquals("deadline " + request.deadline() + " passed", ended.endReason());
  }

  @Test
  void retentionPrunesOnlyARunTheCoordinatorDoesNotHoldAndAPrunedRunIsNotResumed() {
    RunRequest request = request(job(), 2);
    create(stage(request), "digest");
    String runId = request.runId();
    assertInstanceOf(RunCoordinator.PruningRefused.class, pruning(runId));
    control(cancel(runId));
    awaitFiled(runId);

    assertInstanceOf(RunCoordinator.PruningAllowed.class, pruning(runId));
    restartCoordinator();

    assertEquals(
        Set.of(runId),
        this.<RunCoordinator.PruningClaims>ask(RunCoordinator.GetPruning::new).runIds(),
        "the claim outlives the coordinator");
    Instant later = clock.instant().plus(Duration.ofHours(6));
    assertEquals("run_archived", refusal(control(resume(runId, later))));
    this.<RunCoordinator.PruningReply>ask(r -> new RunCoordinator.EndPruning(runId, r));
    assertEquals(
        Set.of(), this.<RunCoordinator.PruningClaims>ask(RunCoordinator.GetPruning::new).runIds());
    assertEquals("unknown_run", refusal(control(cancel("nobody/" + DATE))));
  }

  // --- fixtures

  static String job() {
    return "coordinated-" + JOBS.incrementAndGet();
  }

  /** A run of {@code accounts} accounts due four hours from the test's now. */
  static RunRequest request(String job, int accounts) {
    List<AccountCursor> scope = new ArrayList<>();
    for (int i = 0; i < accounts; i++) {
      scope.add(new AccountCursor("acct-" + i, "c-1"));
    }
    return new RunRequest(
        job, DATE, new Scope.Inline(scope), clock.instant().plus(Duration.ofHours(4)), 3, 0);
  }

  static RunRequest withDeadline(RunRequest r, Instant deadline) {
    return new RunRequest(
        r.job(), r.businessDate(), r.scope(), deadline, r.maxAttempts(), r.maxFailedItems());
  }

  /** The request's rows staged in run_item under a scope of their own, as a node stages them. */
  record Staged(RunRequest request, String scopeId, int items) {}

  static final AtomicInteger SCOPES = new AtomicInteger();

  static Staged stage(RunRequest request) {
    List<AccountCursor> accounts = ((Scope.Inline) request.scope()).accounts();
    String scopeId = "scope-" + SCOPES.incrementAndGet();
    store.stage(
        scopeId,
        0,
        accounts,
        a ->
            shards.shardNumber(
                ItemId.of(request.job(), request.businessDate(), a.accountId(), a.cursor())));
    return new Staged(request, scopeId, accounts.size());
  }

  RunCoordinator.CreateReply create(Staged staged, String digest) {
    return ask(
        r ->
            new RunCoordinator.CreateRun(
                staged.request(), staged.scopeId(), staged.items(), digest, r));
  }

  RunView get(String runId) {
    return this.<RunCoordinator.RunLookup>ask(r -> new RunCoordinator.GetRun(runId, r)).run();
  }

  /** A command that answers with a {@link RunCoordinator.ControlReply}, given where to. */
  interface Control
      extends Function<ActorRef<RunCoordinator.ControlReply>, RunCoordinator.Command> {}

  static Control cancel(String runId) {
    return r -> new RunCoordinator.CancelRun(runId, r);
  }

  static Control resume(String runId, Instant deadline) {
    return r -> new RunCoordinator.ResumeRun(runId, deadline, r);
  }

  RunCoordinator.PruningReply pruning(String runId) {
    return this.<RunCoordinator.PruningReply>ask(r -> new RunCoordinator.BeginPruning(runId, r));
  }

  RunCoordinator.ControlReply control(Control command) {
    return ask(command);
  }

  static String refusal(RunCoordinator.ControlReply reply) {
    return assertInstanceOf(ControlRefused.class, reply, String.valueOf(reply)).error();
  }

  <T> T ask(Function<ActorRef<T>, RunCoordinator.Command> command) {
    TestProbe<T> probe = testKit.createTestProbe();
    coordinator.tell(command.apply(probe.ref()));
    return probe.receiveMessage(WITHIN);
  }

  /** Waits until the run ended and the coordinator forgot it: it is in run_record now. */
  void awaitFiled(String runId) {
    Await.until(WITHIN, "run " + runId + " filed", () -> get(runId) == null);
  }
}

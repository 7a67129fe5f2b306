package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ForwardingItemGateway;
import io.fencekeeper.testing.GatedProvider;
import io.fencekeeper.testing.OffsetClock;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The nightly run end to end on one node and a real journal, with the simulated provider over real
 * HTTP: the ugly transitions (docs/design.md, "The work item" and "The worker loop"), each its own
 * test, each asserting what a payments engineer cares about: the effects per idempotency key at the
 * provider, the run's final state and counts, and the audit trail.
 */
abstract class RunScenarioContract {

  static final Duration WAIT = Duration.ofSeconds(90);
  static final Duration LEASE = Duration.ofSeconds(10);
  static final LocalDate DATE = LocalDate.parse("2026-11-29");

  abstract TestDatabases.Target database(Path dataDir);

  Path dataDir;
  TestDatabases.Target db;
  OffsetClock clock;
  SimProviderServer sim;
  GatedProvider provider;
  FencekeeperNode node;

  @BeforeEach
  void setUp() throws Exception {
    dataDir = Files.createTempDirectory("fencekeeper-scenario");
    db = database(dataDir);
    clock = new OffsetClock();
    sim = SimProviderServer.start(0, SimFaults.NONE, 42);
    // the test's clock is the world's: the sim judges cleanup deadlines by it, as a provider whose
    // clock agrees with the node's does (the jump past a deadline moves both)
    sim.useClock(clock);
    provider =
        new GatedProvider(
            HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(2)));
  }

  @AfterEach
  void tearDown() {
    if (node != null) {
      node.close();
    }
    provider.close();
    sim.close();
  }

  FencekeeperNode startNode(int workers, UnaryOperator<ItemGateway> workerGateway) {
    Map<String, Object> overrides = TestNodes.overrides(db, dataDir);
    overrides.put("fencekeeper.lease", LEASE.toMillis() + "ms");
    // the client's own request timeout, which the cleanup deadlines are made of
    overrides.put("fencekeeper.provider.request-timeout", "2s");
    FencekeeperNode started =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .clock(clock)
            .provider(provider)
            .workers(workers)
            .workerGateway(workerGateway)
            .start();
    try {
      return started.awaitUp(Duration.ofSeconds(30));
    } catch (Exception e) {
      started.close();
      throw new IllegalStateException(e);
    }
  }

  static List<AccountCursor> accounts(int count) {
    List<AccountCursor> accounts = new ArrayList<>(count);
    for (int i = 1; i <= count; i++) {
      accounts.add(new AccountCursor(String.format("acct-%05d", i), "cur-" + (i % 7)));
    }
    return accounts;
  }

  RunView create(String job, List<AccountCursor> accounts, Instant deadline) throws Exception {
    RunRequest request =
        new RunRequest(job, DATE, new Scope.Inline(accounts), deadline, 5, accounts.size());
    RunCoordinator.CreateReply reply =
        node.runs().create(request).toCompletableFuture().get(60, TimeUnit.SECONDS);
    return assertInstanceOf(RunCoordinator.Created.class, reply).run();
  }

  RunView view(String runId) {
    try {
      return node.runs().get(runId).toCompletableFuture().get(10, TimeUnit.SECONDS).orElseThrow();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  RunView awaitEnded(String runId) {
    return Await.until(WAIT, "run " + runId + " to end", () -> view(runId), r -> r.state().ended());
  }

  static ItemId item(String job, AccountCursor account) {
    return ItemId.of(job, DATE, account.accountId(), account.cursor());
  }

  /** Every cleanup the provider actually applied, by key: the customer's view of duplicates. */
  void assertAtMostOneEffectPerKeyAndOneForEveryAction(String job, List<AccountCursor> accounts)
      throws Exception {
    Map<String, Integer> effects = sim.effects();
    for (Map.Entry<String, Integer> effect : effects.entrySet()) {
      assertEquals(1, effect.getValue(), "effects for key " + effect.getKey());
    }
    for (AccountCursor account : accounts) {
      ItemId id = item(job, account);
      ItemView state = itemView(id);
      assertEquals(WorkItem.Status.DONE, state.status(), id.value());
      boolean nothingToDo = state.effectOutcome().kind() == WorkItem.OutcomeKind.NOTHING_TO_DO;
      assertEquals(
          nothingToDo ? 0 : 1,
          effects.getOrDefault(id.idempotencyKey(), 0),
          "effects at the provider for " + id);
    }
  }

  ItemView itemView(ItemId id) throws Exception {
    WorkItem.Reply reply = node.items().get(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
    return assertInstanceOf(WorkItem.Accepted.class, reply).item();
  }

  List<ItemAudit.Entry> audit(ItemId id) throws Exception {
    return new ItemAudit(node.system()).trail(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** An account the sim has something to clean up for, so apply is really called. */
  AccountCursor accountWithAction(String job, List<AccountCursor> accounts) throws Exception {
    for (AccountCursor account : accounts) {
      if (!provider.plan(item(job, account)).toCompletableFuture().get().nothingToDo()) {
        return account;
      }
    }
    throw new IllegalStateException("no account with an action");
  }

  // ------------------------------------------------------------------------------------------------

  @Test
  void runOfThousandsSucceedsWithExactlyOneEffectPerKey() throws Exception {
    node = startNode(16, UnaryOperator.identity());
    List<AccountCursor> accounts = accounts(2000);
    RunView created = create("bulk", accounts, clock.instant().plus(Duration.ofHours(1)));
    assertEquals(2000, created.counts().total());

    RunView ended = awaitEnded(created.runId());

    assertEquals(RunState.SUCCEEDED, ended.state());
    assertEquals(2000, ended.counts().done());
    assertEquals(0, ended.counts().failed() + ended.counts().closed());
    assertAtMostOneEffectPerKeyAndOneForEveryAction("bulk", accounts);
  }

  @Test
  void pausedWorkerCannotCommitAfterAnotherWorkerClaimed() throws Exception {
    // the provider would replay the key rather than refuse the old token: the entity's fence alone
    // must stop the paused worker's commit
    sim.setFaults(SimFaults.NONE.withIgnoreFencing(true));
    node = startNode(4, UnaryOperator.identity());
    List<AccountCursor> accounts = accounts(20);
    AccountCursor paused = accountWithAction("paused", accounts);
    provider.hold(paused.accountId());
    RunView run = create("paused", accounts, clock.instant().plus(Duration.ofHours(1)));
    ItemId pausedItem = item("paused", paused);

    Await.until(
        WAIT,
        "the first worker to pause at the provider",
        () -> provider.arrived(paused.accountId()) == 1);
    // the worker stays paused past its lease; another worker takes the item over
    clock.jump(LEASE.plusSeconds(10));
    RunView ended = awaitEnded(run.runId());
    assertEquals(RunState.SUCCEEDED, ended.state());
    ItemView taken = itemView(pausedItem);
    assertEquals(2, taken.token(), "the second claim finished the item");

    // the first worker wakes up and tries to commit with token 1
    provider.open(paused.accountId());
    Await.until(
        WAIT,
        "the paused worker's commit to be rejected",
        () -> {
          try {
            return audit(pausedItem).stream().anyMatch(RunScenarioContract::isRejectedRecord);
          } catch (Exception e) {
            return false;
          }
        });
    List<ItemAudit.Entry> trail = audit(pausedItem);
    WorkItem.StaleCommandRejected rejected =
        trail.stream()
            .map(ItemAudit.Entry::event)
            .filter(WorkItem.StaleCommandRejected.class::isInstance)
            .map(WorkItem.StaleCommandRejected.class::cast)
            .filter(r -> r.command().startsWith("RecordEffect"))
            .findFirst()
            .orElseThrow();
    assertEquals("RecordEffectAndComplete", rejected.command());
    assertEquals(1, rejected.presentedToken());
    assertEquals(2, rejected.currentToken());
    assertEquals(WorkItem.Status.DONE, itemView(pausedItem).status());
    assertEquals(1, sim.effects().get(pausedItem.idempotencyKey()));
    assertAtMostOneEffectPerKeyAndOneForEveryAction("paused", accounts);
  }

  @Test
  void providerTimeoutAfterAcceptIsReconciledNotRepeated() throws Exception {
    // a provider without deduplication: only reconciliation stands between a timeout and a
    // second cleanup
    sim.setFaults(SimFaults.NONE.withNonIdempotent(true).withTimeoutAfterAccept(0.3, 0));
    node = startNode(8, UnaryOperator.identity());
    List<AccountCursor> accounts = accounts(300);
    RunView run = create("timeouts", accounts, clock.instant().plus(Duration.ofHours(1)));

    RunView ended = awaitEnded(run.runId());

    assertEquals(RunState.SUCCEEDED, ended.state());
    // a run that shows as ended shows its final counters: every reconciliation in the journal
    long reconciledInJournal = 0;
    for (AccountCursor account : accounts) {
      for (ItemAudit.Entry entry : audit(item("timeouts", account))) {
        if (entry.event() instanceof WorkItem.ItemCompleted completed && completed.reconciled()) {
          reconciledInJournal++;
        }
      }
    }
    assertTrue(reconciledInJournal > 0, "some items were reconciled");
    assertEquals(reconciledInJournal, ended.reconciliations(), ended.toString());
    assertAtMostOneEffectPerKeyAndOneForEveryAction("timeouts", accounts);
  }

  @Test
  void finalStatusWriteFailsButTheItemStaysRecoverableWithOneEffect() throws Exception {
    List<AccountCursor> accounts = accounts(30);
    AtomicBoolean failedOnce = new AtomicBoolean();
    AccountCursor victim = accounts.get(7);
    node =
        startNode(
            4,
            items ->
                new ForwardingItemGateway(items) {
                  @Override
                  public CompletionStage<WorkItem.Reply> recordEffectAndComplete(
                      ItemId item,
                      String workerId,
                      long token,
                      WorkItem.EffectOutcome outcome,
                      int throttles) {
                    // every write of the first holder fails (its worker sends it again while
                    // its lease lasts), so the item stays LEASED until that lease has run out
                    if (item.accountId().equals(victim.accountId()) && token == 1) {
                      failedOnce.set(true);
                      return CompletableFuture.failedFuture(
                          new IllegalStateException("journal write failed"));
                    }
                    return super.recordEffectAndComplete(item, workerId, token, outcome, throttles);
                  }
                });
    RunView run = create("final-write", accounts, clock.instant().plus(Duration.ofHours(1)));
    ItemId victimItem = item("final-write", victim);

    Await.until(
        WAIT,
        "every other item to finish",
        () -> view(run.runId()).counts().done() == accounts.size() - 1);
    assertTrue(failedOnce.get());
    ItemView stuck = itemView(victimItem);
    assertEquals(WorkItem.Status.LEASED, stuck.status());
    // the write that would have recorded the effect and the completion never happened
    assertEquals(WorkItem.EffectStatus.NONE, stuck.effect());
    // the holder is gone; its lease runs out and the item is taken over
    clock.jump(LEASE.plusSeconds(10));

    RunView ended = awaitEnded(run.runId());
    assertEquals(RunState.SUCCEEDED, ended.state());
    assertEquals(2, itemView(victimItem).token(), "finished by a second claim");
    assertAtMostOneEffectPerKeyAndOneForEveryAction("final-write", accounts);
  }

  /** Runs 40 items of which 4 are stuck at the provider past the deadline. */
  record PartialRun(String runId, List<AccountCursor> accounts, List<AccountCursor> stuck) {}

  PartialRun runIntoTheDeadline(String job) throws Exception {
    node = startNode(8, UnaryOperator.identity());
    List<AccountCursor> accounts = accounts(40);
    List<AccountCursor> stuck = new ArrayList<>();
    for (AccountCursor account : accounts) {
      if (stuck.size() < 4
          && !provider.plan(item(job, account)).toCompletableFuture().get().nothingToDo()) {
        stuck.add(account);
        provider.hold(account.accountId());
      }
    }
    Instant deadline = clock.instant().plus(Duration.ofMinutes(30));
    RunView run = create(job, accounts, deadline);
    Await.until(
        WAIT,
        "all but the stuck items to finish",
        () -> view(run.runId()).counts().done() == accounts.size() - stuck.size());
    Await.until(
        WAIT,
        "the stuck items to reach the provider",
        () -> stuck.stream().allMatch(a -> provider.arrived(a.accountId()) == 1));
    clock.jump(Duration.ofMinutes(31));
    RunView ended = awaitEnded(run.runId());
    assertEquals(RunState.PARTIAL, ended.state());
    assertEquals(accounts.size() - stuck.size(), ended.counts().done());
    assertEquals(stuck.size(), ended.counts().closed());
    assertEquals(0, ended.counts().failed());
    assertEquals(0, ended.counts().pending() + ended.counts().leased());
    return new PartialRun(run.runId(), accounts, stuck);
  }

  @Test
  void deadlinePassesAndTheRunEndsPartialWithExactCounts() throws Exception {
    PartialRun partial = runIntoTheDeadline("deadline");
    for (AccountCursor account : partial.stuck()) {
      ItemView closed = itemView(item("deadline", account));
      assertEquals(WorkItem.Status.CLOSED, closed.status());
      assertEquals(2, closed.token(), "closing bumped the token past the stuck worker's");
    }
    // the stuck workers wake up after the deadline: a send that lands before its own cleanup
    // deadline commits at the provider and its record is refused by the item; one that lands
    // after it is refused by the provider itself (docs/provider-protocol.md, "The deadline")
    for (AccountCursor account : partial.stuck()) {
      provider.open(account.accountId());
    }
    for (AccountCursor account : partial.stuck()) {
      ItemId id = item("deadline", account);
      Await.until(
          WAIT,
          "the late send of " + id + " to come back",
          () -> provider.heldCallFinished(account.accountId()));
      Await.until(
          WAIT,
          "the late commit of " + id + " to be rejected, or to have been refused by the provider",
          () -> {
            try {
              return !sim.effects().containsKey(id.idempotencyKey())
                  || audit(id).stream().anyMatch(RunScenarioContract::isRejectedRecord);
            } catch (Exception e) {
              return false;
            }
          });
      assertTrue(sim.effects().getOrDefault(id.idempotencyKey(), 0) <= 1, "at most one effect");
      assertEquals(WorkItem.Status.CLOSED, itemView(id).status());
    }
    assertEquals(RunState.PARTIAL, view(partial.runId()).state());
  }

  @Test
  void resumeAfterTheDeadlineSucceedsWithoutRedoingDoneItems() throws Exception {
    PartialRun partial = runIntoTheDeadline("resume");
    for (AccountCursor account : partial.stuck()) {
      provider.open(account.accountId());
    }
    RunCoordinator.ControlReply resumed =
        node.runs()
            .resume(partial.runId(), clock.instant().plus(Duration.ofHours(1)))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertInstanceOf(RunCoordinator.ControlAccepted.class, resumed);

    RunView ended = awaitEnded(partial.runId());
    assertEquals(RunState.SUCCEEDED, ended.state());
    assertEquals(partial.accounts().size(), ended.counts().done());
    for (AccountCursor account : partial.accounts()) {
      ItemId id = item("resume", account);
      long claims = audit(id).stream().filter(e -> e.type().equals("LeaseGranted")).count();
      if (partial.stuck().contains(account)) {
        assertEquals(2, claims, "a stuck item is claimed once more after the resume: " + id);
      } else {
        assertEquals(1, claims, "a DONE item is never redone: " + id);
      }
    }
    assertAtMostOneEffectPerKeyAndOneForEveryAction("resume", partial.accounts());
  }

  @Test
  void nodeRestartedMidRunContinuesFromTheJournalAndCompletes() throws Exception {
    sim.setFaults(SimFaults.NONE.withLatency(5, 5));
    node = startNode(4, UnaryOperator.identity());
    List<AccountCursor> accounts = accounts(600);
    RunView run = create("restart", accounts, clock.instant().plus(Duration.ofHours(1)));
    Await.until(WAIT, "some progress", () -> view(run.runId()).counts().done() >= 100);
    node.close();
    node = null;

    node = startNode(4, UnaryOperator.identity());
    RunView ended = awaitEnded(run.runId());
    assertEquals(RunState.SUCCEEDED, ended.state());
    assertEquals(accounts.size(), ended.counts().done());
    assertAtMostOneEffectPerKeyAndOneForEveryAction("restart", accounts);
  }

  @Test
  void creatingTheSameRunTwiceReturnsItAndDifferentParametersConflict() throws Exception {
    node = startNode(2, UnaryOperator.identity());
    List<AccountCursor> accounts = accounts(10);
    Instant deadline = clock.instant().plus(Duration.ofHours(1));
    RunView first = create("twice", accounts, deadline);
    RunRequest same = new RunRequest("twice", DATE, new Scope.Inline(accounts), deadline, 5, 10);
    RunCoordinator.CreateReply again =
        node.runs().create(same).toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertEquals(
        first.runId(), assertInstanceOf(RunCoordinator.AlreadyExists.class, again).run().runId());
    RunRequest other = new RunRequest("twice", DATE, new Scope.Inline(accounts), deadline, 3, 10);
    RunCoordinator.CreateReply conflict =
        node.runs().create(other).toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertTrue(
        assertInstanceOf(RunCoordinator.Conflict.class, conflict)
            .message()
            .contains("maxAttempts"));
    awaitEnded(first.runId());
  }

  static boolean isRejectedRecord(ItemAudit.Entry entry) {
    return entry.event() instanceof WorkItem.StaleCommandRejected rejected
        && rejected.command().startsWith("RecordEffect");
  }
}

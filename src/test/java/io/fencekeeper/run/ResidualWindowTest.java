package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

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
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where the guarantees come from, measured. A worker that pauses between its own lease check and
 * the send is stopped by the provider: by its idempotency key, or by its fencing-token check. A
 * provider with neither leaves a real window, and this test measures it instead of hiding it. A
 * worker that pauses after its apply succeeded is caught by reconciliation, whatever the provider.
 */
class ResidualWindowTest {

  static final Duration LEASE = Duration.ofSeconds(10);
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final int PAUSED = 10;

  OffsetClock clock;
  SimProviderServer sim;
  GatedProvider provider;
  FencekeeperNode node;

  @BeforeEach
  void setUp() {
    clock = new OffsetClock();
    sim = SimProviderServer.start(0, SimFaults.NONE, 3);
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

  void start(UnaryOperator<ItemGateway> workerGateway) throws Exception {
    Path dataDir = Files.createTempDirectory("fencekeeper-window");
    Map<String, Object> overrides = TestNodes.overrides(TestDatabases.h2File(dataDir), dataDir);
    overrides.put("fencekeeper.lease", LEASE.toMillis() + "ms");
    node =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .clock(clock)
            .provider(provider)
            .workers(2 * PAUSED)
            .workerGateway(workerGateway)
            .start()
            .awaitUp(Duration.ofSeconds(30));
  }

  /**
   * Pauses the first apply of PAUSED items past their lease, lets others finish, then wakes them.
   */
  Map<String, Integer> pausedBeforeSend(String job) throws Exception {
    start(UnaryOperator.identity());
    List<AccountCursor> accounts = new ArrayList<>();
    List<ItemId> paused = new ArrayList<>();
    for (int i = 1; paused.size() < PAUSED; i++) {
      AccountCursor account = new AccountCursor("acct-" + i, "c-1");
      accounts.add(account);
      ItemId id = ItemId.of(job, DATE, account.accountId(), account.cursor());
      if (!provider.plan(id).toCompletableFuture().get().nothingToDo()) {
        paused.add(id);
        provider.hold(account.accountId());
      }
    }
    RunView run = create(job, accounts);
    Await.until(
        Duration.ofSeconds(60),
        "every paused worker at the provider",
        () -> paused.stream().allMatch(id -> provider.arrived(id.accountId()) == 1));
    clock.jump(LEASE.plusSeconds(10));
    awaitSucceeded(run.runId());
    for (ItemId id : paused) {
      provider.open(id.accountId());
    }
    // the woken workers' sends reach the provider; their commits are refused by the item
    for (ItemId id : paused) {
      Await.until(
          Duration.ofSeconds(60),
          "the woken worker of " + id + " to finish",
          () -> provider.heldCallFinished(id.accountId()));
    }
    Map<String, Integer> effects = new java.util.TreeMap<>();
    for (ItemId id : paused) {
      effects.put(id.value(), sim.effects().getOrDefault(id.idempotencyKey(), 0));
    }
    return effects;
  }

  RunView create(String job, List<AccountCursor> accounts) throws Exception {
    RunRequest request =
        new RunRequest(
            job, DATE, new Scope.Inline(accounts), clock.instant().plus(Duration.ofHours(1)), 5, 0);
    return assertInstanceOf(
            RunCoordinator.Created.class,
            node.runs().create(request).toCompletableFuture().get(30, TimeUnit.SECONDS))
        .run();
  }

  void awaitSucceeded(String runId) {
    RunView ended =
        Await.until(
            Duration.ofSeconds(90),
            "run " + runId,
            () -> {
              try {
                return node.runs().get(runId).toCompletableFuture().get().orElseThrow();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            r -> r.state().ended());
    assertEquals(RunState.SUCCEEDED, ended.state());
  }

  @Test
  void pausedSendIsStoppedByTheProvidersFencingTokenCheck() throws Exception {
    // no deduplication at all, but the provider refuses a token lower than it has seen
    sim.setFaults(SimFaults.NONE.withNonIdempotent(true));
    Map<String, Integer> effects = pausedBeforeSend("fenced");
    effects.forEach((item, count) -> assertEquals(1, count, item));
  }

  @Test
  void pausedSendIsStoppedByTheIdempotencyKey() throws Exception {
    // fencing ignored, but a repeated key with the same body is replayed, not applied
    sim.setFaults(SimFaults.NONE.withIgnoreFencing(true));
    Map<String, Integer> effects = pausedBeforeSend("deduplicated");
    effects.forEach((item, count) -> assertEquals(1, count, item));
  }

  @Test
  void withoutIdempotencyOrFencingThePausedSendIsASecondEffectMeasuredNotHidden() throws Exception {
    sim.setFaults(SimFaults.NONE.withNonIdempotent(true).withIgnoreFencing(true));
    Map<String, Integer> effects = pausedBeforeSend("unprotected");
    long duplicated = effects.values().stream().filter(count -> count > 1).count();
    System.out.printf(
        "residual window: %d of %d workers paused between their lease check and the send"
            + " applied a second effect on a provider with neither idempotency nor fencing%n",
        duplicated, PAUSED);
    // every paused send lands after the takeover finished: the window is the whole pause
    assertEquals(PAUSED, duplicated, effects.toString());
  }

  @Test
  void workerPausedAfterItsApplySucceededIsReconciledNotRepeated() throws Exception {
    sim.setFaults(SimFaults.NONE.withNonIdempotent(true).withIgnoreFencing(true));
    CompletableFuture<Void> wake = new CompletableFuture<>();
    String job = "after-apply";
    ItemId victim = ItemId.of(job, DATE, "acct-1", "c-1");
    if (provider.plan(victim).toCompletableFuture().get().nothingToDo()) {
      victim = ItemId.of(job, DATE, "acct-2", "c-1");
    }
    ItemId paused = victim;
    start(
        items ->
            new ForwardingItemGateway(items) {
              boolean held;

              @Override
              public synchronized CompletionStage<WorkItem.Reply> recordEffectAndComplete(
                  ItemId item,
                  String workerId,
                  long token,
                  WorkItem.EffectOutcome outcome,
                  int throttles) {
                if (item.equals(paused) && !held) {
                  held = true; // the worker applied, then stalls before telling the item
                  return wake.thenCompose(
                      w ->
                          super.recordEffectAndComplete(item, workerId, token, outcome, throttles));
                }
                return super.recordEffectAndComplete(item, workerId, token, outcome, throttles);
              }
            });
    RunView run = create(job, List.of(new AccountCursor(paused.accountId(), paused.cursor())));
    Await.until(
        Duration.ofSeconds(60),
        "the effect to be applied",
        () -> sim.effects().getOrDefault(paused.idempotencyKey(), 0) == 1);
    clock.jump(LEASE.plusSeconds(10));
    awaitSucceeded(run.runId());
    ItemView item =
        assertInstanceOf(
                WorkItem.Accepted.class, node.items().get(paused).toCompletableFuture().get())
            .item();
    assertEquals(WorkItem.OutcomeKind.FOUND_BY_LOOKUP, item.effectOutcome().kind());
    wake.complete(null);
    assertEquals(1, sim.effects().get(paused.idempotencyKey()));
  }
}

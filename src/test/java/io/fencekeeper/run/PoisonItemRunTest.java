package io.fencekeeper.run;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.run.governor.GovernorPolicy;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ForwardingItemGateway;
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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A poison item on one node (docs/design.md, "The dispatcher"): every worker that takes it vanishes
 * without a word (its plan never returns, and nothing it sends after its claim reaches the item: no
 * renewal, no late stale command, see {@link SilentOnceClaimed}). Its node stays an Up member, so
 * none of those holders counts as lost ("Lost holders count": the membership read); the bound that
 * still holds is K + 1 silent ends in a row, so after three such holders the item is QUARANTINED,
 * the run shows it and does not end without it, the deadline ends the run PARTIAL with the item
 * still quarantined, and an operator's retry hands it out again.
 */
class PoisonItemRunTest {

  static final Duration WAIT = Duration.ofSeconds(60);
  static final Duration LEASE = Duration.ofSeconds(10);
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final List<AccountCursor> ACCOUNTS = accounts(20);
  static final AccountCursor POISON = ACCOUNTS.get(11);

  Path dataDir;
  OffsetClock clock;
  SimProviderServer sim;
  PoisonProvider provider;
  FencekeeperNode node;

  @BeforeEach
  void setUp() throws Exception {
    dataDir = Files.createTempDirectory("fencekeeper-poison");
    clock = new OffsetClock();
    sim = SimProviderServer.start(0, SimFaults.NONE, 42);
    provider =
        new PoisonProvider(
            HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(2)),
            POISON.accountId());
    Map<String, Object> overrides = TestNodes.overrides(TestDatabases.h2File(dataDir), dataDir);
    overrides.put("fencekeeper.lease", LEASE.toMillis() + "ms");
    node =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .clock(clock)
            .provider(provider)
            .workerGateway(
                items -> new SilentOnceClaimed(items, POISON.accountId(), provider::isCured))
            .workers(4)
            .start()
            .awaitUp(Duration.ofSeconds(30));
  }

  @AfterEach
  void tearDown() {
    if (node != null) {
      node.close();
    }
    provider.close();
    sim.close();
  }

  @Test
  void poisonItemIsQuarantinedAfterTwoLostHoldersAndTheDeadlineEndsTheRunPartial()
      throws Exception {
    RunView run = create("poison-deadline");
    ItemId poison = item("poison-deadline", POISON);
    awaitQuarantined(run);

    RunView quarantined = view(run.runId());
    assertEquals(RunState.RUNNING, quarantined.state(), "a quarantined item does not end the run");
    assertEquals(ACCOUNTS.size() - 1, quarantined.counts().done());
    assertEquals(0, quarantined.counts().pending() + quarantined.counts().leased());
    // the counter comes from the journal (ItemQuarantined), a projection refresh behind the board
    Await.until(
        WAIT,
        "the run's quarantines counter to read the journal",
        () -> view(run.runId()).quarantines() == 1);
    ItemView item = itemView(poison);
    assertEquals(WorkItem.Status.QUARANTINED, item.status());
    WorkItem.ItemQuarantined event =
        audit(poison).stream()
            .map(ItemAudit.Entry::event)
            .filter(WorkItem.ItemQuarantined.class::isInstance)
            .map(WorkItem.ItemQuarantined.class::cast)
            .findFirst()
            .orElseThrow();
    assertEquals(holders(poison), event.lostOwners(), "the three holders that vanished");
    assertTrue(event.reason().startsWith("3 leases in a row ended"), event.reason());
    assertEquals(event.reason(), item.lastError());
    Await.until(
        WAIT,
        "the governor to hold capacity for the quarantine",
        () -> view(run.runId()).governor().mode() == GovernorPolicy.Mode.ALERT_QUARANTINE);

    clock.jump(Duration.ofMinutes(31));
    RunView ended = awaitEnded(run.runId());
    assertEquals(RunState.PARTIAL, ended.state());
    assertEquals(ACCOUNTS.size() - 1, ended.counts().done());
    assertEquals(1, ended.counts().quarantined(), "still quarantined, not closed");
    assertEquals(0, ended.counts().closed() + ended.counts().failed());
    assertEquals(WorkItem.Status.QUARANTINED, itemView(poison).status());
    assertOneEffectForEveryDoneItem("poison-deadline", poison);
  }

  @Test
  void quarantinedItemThatAnOperatorRetriesIsHandedOutAgainAndTheRunSucceeds() throws Exception {
    RunView run = create("poison-retry");
    ItemId poison = item("poison-retry", POISON);
    awaitQuarantined(run);

    provider.cure(); // the operator fixed the adapter
    WorkItem.Reply retried = node.items().retry(poison).toCompletableFuture().get(10, SECONDS);
    assertEquals(
        WorkItem.Status.PENDING,
        assertInstanceOf(WorkItem.Accepted.class, retried).item().status());

    RunView ended = awaitEnded(run.runId());
    assertEquals(RunState.SUCCEEDED, ended.state());
    assertEquals(ACCOUNTS.size(), ended.counts().done());
    assertEquals(0, ended.counts().quarantined());
    ItemView done = itemView(poison);
    assertEquals(WorkItem.Status.DONE, done.status());
    assertEquals(4, done.attempt(), "three silent holders, then the attempt after the retry");
    assertOneEffectForEveryDoneItem("poison-retry", null);
  }

  // ------------------------------------------------------------------------------------------------

  /**
   * Every other item done; the poison item's holders vanish three times; the fourth claim
   * quarantines.
   */
  void awaitQuarantined(RunView run) {
    Await.until(
        WAIT,
        "every other item done and the poison item's first holder stuck",
        () -> view(run.runId()).counts().done() == ACCOUNTS.size() - 1 && provider.poisoned() == 1);
    clock.jump(LEASE.plusSeconds(10)); // the holder is gone: its lease and its offer run out
    Await.until(WAIT, "a second holder to take it and vanish", () -> provider.poisoned() == 2);
    clock.jump(LEASE.plusSeconds(10));
    Await.until(WAIT, "a third holder to take it and vanish", () -> provider.poisoned() == 3);
    clock.jump(LEASE.plusSeconds(10));
    Await.until(
        WAIT,
        "the run to show the item quarantined",
        () -> view(run.runId()).counts().quarantined() == 1);
  }

  RunView create(String job) throws Exception {
    RunRequest request =
        new RunRequest(
            job,
            DATE,
            new Scope.Inline(ACCOUNTS),
            clock.instant().plus(Duration.ofMinutes(30)),
            5,
            5);
    return assertInstanceOf(
            RunCoordinator.Created.class,
            node.runs().create(request).toCompletableFuture().get(60, SECONDS))
        .run();
  }

  RunView view(String runId) {
    try {
      return node.runs().get(runId).toCompletableFuture().get(10, SECONDS).orElseThrow();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  RunView awaitEnded(String runId) {
    return Await.until(WAIT, "run " + runId + " to end", () -> view(runId), r -> r.state().ended());
  }

  ItemView itemView(ItemId id) throws Exception {
    return assertInstanceOf(
            WorkItem.Accepted.class, node.items().get(id).toCompletableFuture().get(10, SECONDS))
        .item();
  }

  List<ItemAudit.Entry> audit(ItemId id) throws Exception {
    return new ItemAudit(node.system()).trail(id).toCompletableFuture().get(10, SECONDS);
  }

  /** The workers that were granted the item's lease, in order. */
  List<String> holders(ItemId id) throws Exception {
    return audit(id).stream()
        .map(ItemAudit.Entry::event)
        .filter(WorkItem.LeaseGranted.class::isInstance)
        .map(e -> ((WorkItem.LeaseGranted) e).workerId())
        .toList();
  }

  /** Every DONE item has its one effect at the provider; the quarantined one has none. */
  void assertOneEffectForEveryDoneItem(String job, ItemId quarantined) throws Exception {
    Map<String, Integer> effects = sim.effects();
    for (AccountCursor account : ACCOUNTS) {
      ItemId id = item(job, account);
      if (id.equals(quarantined)) {
        assertEquals(null, effects.get(id.idempotencyKey()), "no effect for " + id);
        continue;
      }
      ItemView state = itemView(id);
      assertEquals(WorkItem.Status.DONE, state.status(), id.value());
      boolean nothingToDo = state.effectOutcome().kind() == WorkItem.OutcomeKind.NOTHING_TO_DO;
      assertEquals(
          nothingToDo ? 0 : 1,
          effects.getOrDefault(id.idempotencyKey(), 0),
          "effects at the provider for " + id);
    }
  }

  static ItemId item(String job, AccountCursor account) {
    return ItemId.of(job, DATE, account.accountId(), account.cursor());
  }

  static List<AccountCursor> accounts(int count) {
    List<AccountCursor> accounts = new ArrayList<>(count);
    for (int i = 1; i <= count; i++) {
      accounts.add(new AccountCursor(String.format("acct-%05d", i), "cur-1"));
    }
    return accounts;
  }

  /**
   * The worker side of a process that died on the poison account: once a worker has claimed it
   * (before the cure), nothing more it sends reaches the item. A dead process does not renew, and a
   * worker that is only stuck would: its late command would tell the item it is alive
   * (docs/design.md, "Lost holders count").
   */
  static final class SilentOnceClaimed extends ForwardingItemGateway {
    private final String poisonAccount;
    private final BooleanSupplier cured;
    private final Set<String> dead = ConcurrentHashMap.newKeySet();

    SilentOnceClaimed(ItemGateway items, String poisonAccount, BooleanSupplier cured) {
      super(items);
      this.poisonAccount = poisonAccount;
      this.cured = cured;
    }

    @Override
    public CompletionStage<WorkItem.Reply> claim(
        ItemId item, String workerId, Duration lease, int maxAttempts) {
      if (item.accountId().equals(poisonAccount) && !cured.getAsBoolean()) {
        dead.add(workerId);
      }
      return super.claim(item, workerId, lease, maxAttempts);
    }

    private boolean silent(String workerId) {
      return dead.contains(workerId);
    }

    private static CompletionStage<WorkItem.Reply> never() {
      return new CompletableFuture<>();
    }

    @Override
    public void claimAbandoned(ItemId item, String workerId) {
      if (!silent(workerId)) {
        super.claimAbandoned(item, workerId);
      }
    }

    @Override
    public CompletionStage<WorkItem.Reply> renew(
        ItemId item, String workerId, long token, Duration lease) {
      return silent(workerId) ? never() : super.renew(item, workerId, token, lease);
    }

    @Override
    public CompletionStage<WorkItem.Reply> recordEffect(
        ItemId item, String workerId, long token, WorkItem.EffectOutcome outcome) {
      return silent(workerId) ? never() : super.recordEffect(item, workerId, token, outcome);
    }

    @Override
    public CompletionStage<WorkItem.Reply> markAmbiguous(
        ItemId item, String workerId, long token, String reason) {
      return silent(workerId) ? never() : super.markAmbiguous(item, workerId, token, reason);
    }

    @Override
    public CompletionStage<WorkItem.Reply> complete(ItemId item, String workerId, long token) {
      return silent(workerId) ? never() : super.complete(item, workerId, token);
    }

    @Override
    public CompletionStage<WorkItem.Reply> recordEffectAndComplete(
        ItemId item, String workerId, long token, WorkItem.EffectOutcome outcome, int throttles) {
      return silent(workerId)
          ? never()
          : super.recordEffectAndComplete(item, workerId, token, outcome, throttles);
    }

    @Override
    public CompletionStage<WorkItem.Reply> fail(
        ItemId item,
        String workerId,
        long token,
        String error,
        boolean retryable,
        Duration retryAfter,
        int throttles) {
      return silent(workerId)
          ? never()
          : super.fail(item, workerId, token, error, retryable, retryAfter, throttles);
    }

    @Override
    public CompletionStage<WorkItem.Reply> release(ItemId item, String workerId, long token) {
      return silent(workerId) ? never() : super.release(item, workerId, token);
    }
  }

  /**
   * The provider adapter with a bug on one account: its plan never returns, as if the worker's
   * process died there (nothing reaches the item: no outcome, no renewal once the lease has run
   * out). {@link #cure()} fixes it.
   */
  static final class PoisonProvider implements Provider {
    private final Provider delegate;
    private final String poisonAccount;
    private final AtomicInteger poisoned = new AtomicInteger();
    private final AtomicBoolean cured = new AtomicBoolean();

    PoisonProvider(Provider delegate, String poisonAccount) {
      this.delegate = delegate;
      this.poisonAccount = poisonAccount;
    }

    /** How many plans of the poison account never returned. */
    int poisoned() {
      return poisoned.get();
    }

    void cure() {
      cured.set(true);
    }

    boolean isCured() {
      return cured.get();
    }

    @Override
    public CompletionStage<Plan> plan(ItemId item) {
      if (item.accountId().equals(poisonAccount) && !cured.get()) {
        poisoned.incrementAndGet();
        return new CompletableFuture<>();
      }
      return delegate.plan(item);
    }

    @Override
    public CompletionStage<Receipt> apply(Cleanup cleanup) {
      return delegate.apply(cleanup);
    }

    @Override
    public CompletionStage<Optional<Receipt>> lookup(ItemId item, String key) {
      return delegate.lookup(item, key);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}

package io.fencekeeper.worker;

import static io.fencekeeper.testing.ScriptedItems.CLAIM;
import static io.fencekeeper.testing.ScriptedItems.CLAIM_ABANDONED;
import static io.fencekeeper.testing.ScriptedItems.MARK_AMBIGUOUS;
import static io.fencekeeper.testing.ScriptedItems.RECORD_EFFECT_AND_COMPLETE;
import static io.fencekeeper.testing.ScriptedItems.RELEASE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.KeepApart;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.item.WorkItem.Status;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.budget.Permits;
import io.fencekeeper.provider.budget.ThrottleShare;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ForwardingItemGateway;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.ScriptedItems;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One attempt at one item, in the order docs/design.md ("The worker loop") gives: what the attempt
 * says to its item (in order) and what it sends the provider (with which key and token), for each
 * way a claim is answered and each way a provider call ends.
 */
class ItemAttemptTest {

  static final ItemId ITEM =
      ItemId.of("payment-reconciliation", LocalDate.parse("2026-11-29"), "acct-7", "c-1");
  static final Duration LEASE = Duration.ofSeconds(30);
  static final long TOKEN = 7;

  static ActorTestKit testKit;

  final ManualClock clock = ManualClock.at("2026-11-30T02:00:00Z");
  final ScriptedItems items = new ScriptedItems();
  final ScriptedProvider provider = new ScriptedProvider();

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /**
   * A provider whose request timeout is 200 ms and clock-skew allowance 50 ms: a lookup after an
   * ambiguous cleanup waits a quarter of a second, not the defaults' eleven.
   */
  static final CleanupDeadlines DEADLINES =
      new CleanupDeadlines(Duration.ofMillis(200), Duration.ofMillis(50));

  /** What every attempt of a pool shares: these items and provider, back-offs of 1-2 ms. */
  static ItemAttempt.Context context(
      ItemGateway items, Provider provider, Clock clock, ActorSystem<?> system) {
    return context(items, provider, clock, system, DEADLINES);
  }

  static ItemAttempt.Context context(
      ItemGateway items,
      Provider provider,
      Clock clock,
      ActorSystem<?> system,
      CleanupDeadlines deadlines) {
    return new ItemAttempt.Context(
        items,
        provider,
        clock,
        system.scheduler(),
        system.executionContext(),
        new Backoff(Duration.ofMillis(1), Duration.ofMillis(2)),
        ItemAttempt.AttemptListener.NONE,
        Permits.UNLIMITED,
        deadlines);
  }

  /** The calls the attempts made, as the pool reports them to the run's dispatcher. */
  final RunCalls runCalls = new RunCalls();

  AttemptResult attempt(BooleanSupplier leaving) throws Exception {
    return attempt(context(items, provider, clock, testKit.system()), leaving);
  }

  AttemptResult attempt(ItemAttempt.Context context, BooleanSupplier leaving) throws Exception {
    return new ItemAttempt(context, ITEM, "node-1/w1", LEASE, 3, leaving, CohortGate.NONE, runCalls)
        .run()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  AttemptResult attempt() throws Exception {
    return attempt(() -> false);
  }

  void claimAnswers(WorkItem.Reply reply) {
    items.answerNow(CLAIM, item -> reply);
  }

  ScriptedItems.Recorded recorded() {
    return (ScriptedItems.Recorded)
        items.commands().stream()
            .filter(c -> c.name().equals(RECORD_EFFECT_AND_COMPLETE))
            .findFirst()
            .orElseThrow()
            .detail();
  }

  /**
   * Issue 48: two items lost their holder in one node's death. While this node has one of them in
   * flight, the other is kept apart: its first claim (any cohort) and its claim in turn (the
   * cohorts in flight) are refused, it is handed back to wait a moment, and it never reaches the
   * provider; once the first has ended it is claimed in its turn.
   */
  @Test
  void anItemOfACohortInFlightIsKeptApartUntilItsNeighbourHasEnded() throws Exception {
    String dead = "pekko://fencekeeper@10.0.0.1:25520";
    ItemId neighbour =
        ItemId.of("payment-reconciliation", LocalDate.parse("2026-11-29"), "acct-8", "c-1");
    List<KeepApart> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
    ItemGateway cohortItems =
        new ForwardingItemGateway(items) {
          @Override
          public CompletionStage<WorkItem.Reply> claim(
              ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keep) {
            asked.add(keep);
            if (keep.anyCohort() || keep.cohorts().contains(dead)) {
              return CompletableFuture.completedFuture(new WorkItem.KeptApart(Set.of(dead)));
            }
            WorkItem.Claimed c = ScriptedItems.claimed(item, TOKEN, EffectStatus.AMBIGUOUS);
            return CompletableFuture.completedFuture(
                new WorkItem.Claimed(
                    c.itemId(),
                    c.token(),
                    c.leaseExpiresAt(),
                    c.attempt(),
                    c.effect(),
                    c.idempotencyKey(),
                    true,
                    c.item(),
                    Set.of(dead)));
          }
        };
    CompletableFuture<Optional<Receipt>> firstLookup = new CompletableFuture<>();
    provider.looksUp(() -> firstLookup);
    CohortGate gate = CohortGate.forPool();
    ItemAttempt.Context ctx = context(cohortItems, provider, clock, testKit.system());
    CompletableFuture<AttemptResult> first =
        new ItemAttempt(ctx, ITEM, "node-1/w1", LEASE, 3, () -> false, gate, runCalls)
            .run()
            .toCompletableFuture();
    Await.until(
        Duration.ofSeconds(10),
        "the first item looked up",
        provider::operations,
        ops -> !ops.isEmpty());
    assertEquals(Set.of(dead), gate.inFlight());

    AttemptResult kept =
        new ItemAttempt(ctx, neighbour, "node-1/w2", LEASE, 3, () -> false, gate, runCalls)
            .run()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertEquals(
        new AttemptResult.RetryAt(clock.instant().plus(AttemptResult.KEPT_APART_WAIT)), kept);
    assertEquals(List.of("lookup"), provider.operations(), "the neighbour reached no provider");
    assertEquals(
        List.of(
            KeepApart.ANY_COHORT, // the first item's first claim
            KeepApart.NOTHING, // its claim in turn: nothing in flight yet
            KeepApart.ANY_COHORT, // the neighbour's first claim
            new KeepApart(false, Set.of(dead))), // and in its turn
        asked);

    firstLookup.complete(Optional.of(ScriptedProvider.receipt(ITEM, "eff-1")));
    assertInstanceOf(AttemptResult.Done.class, first.get(10, TimeUnit.SECONDS));
    assertEquals(Set.of(), gate.inFlight(), "the first attempt's cohort left with it");
    AttemptResult later =
        new ItemAttempt(ctx, neighbour, "node-1/w3", LEASE, 3, () -> false, gate, runCalls)
            .run()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertInstanceOf(AttemptResult.Done.class, later);
    assertEquals(Set.of(), gate.inFlight());
  }

  @Test
  void aCleanClaimIsPlannedAppliedWithTheItemsKeyAndTokenThenRecordedWithTheCompletion()
      throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("plan", "apply"), provider.operations());
    ScriptedProvider.Call apply = provider.calls().get(1);
    assertEquals(ITEM.idempotencyKey(), apply.key(), "the item's key, never the attempt's");
    assertEquals(TOKEN, apply.token(), "the claim's fencing token");
    assertEquals(List.of(CLAIM, RECORD_EFFECT_AND_COMPLETE), items.names());
    assertEquals(TOKEN, items.commands().get(1).token());
    assertEquals(OutcomeKind.APPLIED, recorded().outcome().kind());
    assertEquals("eff-1", recorded().outcome().providerReference());
    assertEquals(0, recorded().throttles());
  }

  @Test
  void aRecordingWhoseAskFailsIsSentAgainWhileTheLeaseLastsAndTheAttemptEndsDone()
      throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    java.util.concurrent.atomic.AtomicInteger asks =
        new java.util.concurrent.atomic.AtomicInteger();
    items.answer(
        RECORD_EFFECT_AND_COMPLETE,
        item ->
            asks.incrementAndGet() == 1
                ? CompletableFuture.failedFuture(new TimeoutException("no answer in time"))
                : CompletableFuture.completedFuture(ScriptedItems.accepted(item, Status.DONE)));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("plan", "apply"), provider.operations(), "applied once");
    assertEquals(
        List.of(CLAIM, RECORD_EFFECT_AND_COMPLETE, RECORD_EFFECT_AND_COMPLETE), items.names());
    assertEquals(TOKEN, items.commands().get(2).token(), "the same lease's token again");
  }

  @Test
  void aPlanWithNothingToDoIsRecordedAndNeverApplied() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    provider.plans(() -> CompletableFuture.completedFuture(Plan.nothing("balanced")));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("plan"), provider.operations());
    assertEquals(OutcomeKind.NOTHING_TO_DO, recorded().outcome().kind());
  }

  @Test
  void anAmbiguousEffectIsLookedUpFirstAndWhatTheLookupFindsIsRecordedNotApplied()
      throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.AMBIGUOUS));
    provider.looksUp(
        () -> CompletableFuture.completedFuture(Optional.of(ScriptedProvider.receipt(ITEM, "e9"))));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("lookup"), provider.operations(), "never planned, never applied");
    assertEquals(ITEM.idempotencyKey(), provider.calls().get(0).key());
    assertEquals(List.of(CLAIM, RECORD_EFFECT_AND_COMPLETE), items.names());
    assertEquals(OutcomeKind.FOUND_BY_LOOKUP, recorded().outcome().kind());
    assertEquals("e9", recorded().outcome().providerReference());
  }

  @Test
  void anAmbiguousEffectTheLookupDoesNotFindIsPlannedAndAppliedUnderTheSameKey() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.AMBIGUOUS));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("lookup", "plan", "apply"), provider.operations());
    assertEquals(ITEM.idempotencyKey(), provider.calls().get(2).key());
    assertEquals(TOKEN, provider.calls().get(2).token());
    assertEquals(OutcomeKind.APPLIED, recorded().outcome().kind());
  }

  /**
   * Night 2's defence: the lookup found nothing, then the plan says nothing is left to do, which a
   * provider may say only once the effect is committed. So the key is looked up once more: an
   * effect committed after the first lookup is recorded as found, not lost as "nothing to do".
   */
  @Test
  void aNothingToDoAfterALookupThatFoundNothingIsLookedUpAgainAndTheEffectRecorded()
      throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.AMBIGUOUS));
    provider
        .plans(() -> CompletableFuture.completedFuture(Plan.nothing("already written off")))
        .looksUp(() -> CompletableFuture.completedFuture(Optional.empty()))
        .looksUp(
            () ->
                CompletableFuture.completedFuture(
                    Optional.of(ScriptedProvider.receipt(ITEM, "late-1"))));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("lookup", "plan", "lookup"), provider.operations(), "never applied");
    assertEquals(OutcomeKind.FOUND_BY_LOOKUP, recorded().outcome().kind());
    assertEquals("late-1", recorded().outcome().providerReference());
  }

  /** The second lookup finds nothing either: then nothing to do is the truth. */
  @Test
  void aNothingToDoConfirmedByASecondLookupIsRecordedAsNothingToDo() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.AMBIGUOUS));
    provider.plans(() -> CompletableFuture.completedFuture(Plan.nothing("balanced")));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("lookup", "plan", "lookup"), provider.operations());
    assertEquals(OutcomeKind.NOTHING_TO_DO, recorded().outcome().kind());
  }

  @Test
  void aRecordedEffectIsOnlyCompleted() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.RECORDED));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of(), provider.operations(), "the provider is not called again");
    assertEquals(List.of(CLAIM, ScriptedItems.COMPLETE), items.names());
    assertEquals(TOKEN, items.commands().get(1).token());
  }

  @Test
  void aRefusedClaimEndsTheAttemptAsTheOneMappingSaysWithoutCallingTheProvider() throws Exception {
    Instant expiry = Instant.parse("2026-11-30T02:00:20Z");
    Instant retryAt = Instant.parse("2026-11-30T02:05:00Z");
    List<WorkItem.Reply> refusals =
        List.of(
            new WorkItem.LeaseHeld("node-2/w3", expiry, 4),
            new WorkItem.NotClaimable(Status.DONE, null, null),
            new WorkItem.NotClaimable(Status.FAILED, "attempts used up", null),
            new WorkItem.NotClaimable(Status.CLOSED, "deadline", null),
            new WorkItem.NotClaimable(Status.QUARANTINED, "holder lost 2 times in a row", null),
            new WorkItem.NotClaimable(Status.PENDING, "backing off", retryAt),
            new WorkItem.NotClaimable(Status.PENDING, "backing off", null));
    List<AttemptResult> expected =
        List.of(
            new AttemptResult.Held(expiry),
            new AttemptResult.Done(),
            new AttemptResult.Failed("attempts used up"),
            new AttemptResult.Closed(),
            new AttemptResult.Quarantined("holder lost 2 times in a row"),
            new AttemptResult.RetryAt(retryAt),
            new AttemptResult.RetryAt(clock.instant()));

    for (int i = 0; i < refusals.size(); i++) {
      claimAnswers(refusals.get(i));
      assertEquals(expected.get(i), attempt(), "claim answered " + refusals.get(i));
      assertEquals(
          expected.get(i),
          AttemptResult.ofClaimAnswer(refusals.get(i), clock.instant()),
          "the lease API's claim-next maps it the same way");
    }

    assertEquals(List.of(), provider.operations());
    assertTrue(items.names().stream().allMatch(CLAIM::equals), items.names().toString());
  }

  @Test
  void aClaimWithoutAnAnswerIsGivenBackAndEndsUnanswered() throws Exception {
    items.answer(
        CLAIM, item -> CompletableFuture.failedFuture(new TimeoutException("no answer in 2 s")));

    AttemptResult result = attempt();

    assertInstanceOf(AttemptResult.Unanswered.class, result);
    assertEquals(List.of(CLAIM, CLAIM_ABANDONED), items.names());
    assertEquals(List.of(), provider.operations());
  }

  @Test
  void anApplyThatTimesOutAfterTheSendIsMarkedAmbiguousBeforeAnythingElseThenLookedUp()
      throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    provider.applies(
        () -> ScriptedProvider.failing(new ProviderError.Ambiguous("timed out after the send")));
    provider.looksUp(
        () -> CompletableFuture.completedFuture(Optional.of(ScriptedProvider.receipt(ITEM, "e2"))));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of(CLAIM, MARK_AMBIGUOUS, RECORD_EFFECT_AND_COMPLETE), items.names());
    assertEquals(TOKEN, items.commands().get(1).token());
    assertEquals(
        List.of("plan", "apply", "lookup"), provider.operations(), "looked up, not applied again");
    assertEquals(OutcomeKind.FOUND_BY_LOOKUP, recorded().outcome().kind());
  }

  @Test
  void anApplyAmbiguousEveryTimeAndNeverFoundEndsTheAttemptAfterItsRetries() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    provider.applies(
        () -> ScriptedProvider.failing(new ProviderError.Ambiguous("the plugin threw")));

    attempt();

    assertEquals(
        List.of("plan", "apply", "lookup", "plan", "apply", "lookup", "plan", "apply"),
        provider.operations(),
        "each lookup before the next apply, and no more than the attempt's retries");
    assertEquals(
        List.of(CLAIM, MARK_AMBIGUOUS, MARK_AMBIGUOUS, MARK_AMBIGUOUS, ScriptedItems.FAIL),
        items.names());
  }

  @Test
  void anAmbiguousApplyWhoseMarkFindsTheLeaseLostStopsThere() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    provider.applies(() -> ScriptedProvider.failing(new ProviderError.Ambiguous("reset")));
    items.answerNow(MARK_AMBIGUOUS, item -> new WorkItem.LeaseLost(TOKEN, TOKEN + 1, "taken over"));

    assertInstanceOf(AttemptResult.Lost.class, attempt());

    assertEquals(List.of("plan", "apply"), provider.operations(), "the next holder looks it up");
    assertEquals(List.of(CLAIM, MARK_AMBIGUOUS), items.names());
  }

  @Test
  void aStaleTokenAtTheProviderLosesTheAttemptAndWritesNothing() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    provider.applies(() -> ScriptedProvider.failing(new ProviderError.StaleToken(TOKEN, 8)));

    AttemptResult result = attempt();

    AttemptResult.Lost lost = assertInstanceOf(AttemptResult.Lost.class, result);
    assertTrue(lost.reason().contains("8"), lost.reason());
    assertEquals(List.of("plan", "apply"), provider.operations(), "never tried again");
    assertEquals(List.of(CLAIM), items.names(), "no record, no failure, no release");
  }

  @Test
  void aThrottledAnswerIsWaitedOutForItsRetryAfterWithoutFailingTheItem() throws Exception {
    Duration retryAfter = Duration.ofMillis(400);
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    provider
        .applies(() -> ScriptedProvider.failing(new ProviderError.Throttled(retryAfter, "429")))
        .applies(() -> CompletableFuture.completedFuture(ScriptedProvider.receipt(ITEM, "eff-1")));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("plan", "apply", "apply"), provider.operations());
    long waitedMillis =
        TimeUnit.NANOSECONDS.toMillis(
            provider.calls().get(2).atNanos() - provider.calls().get(1).atNanos());
    // the back-off alone would be 1-2 ms; a scheduler tick (10 ms) of slack on the lower bound
    assertTrue(waitedMillis >= retryAfter.toMillis() - 10, "waited " + waitedMillis + " ms");
    assertEquals(List.of(CLAIM, RECORD_EFFECT_AND_COMPLETE), items.names(), "no Fail");
    assertEquals(1, recorded().throttles(), "the throttled answer is journaled with the record");
    assertEquals(
        new ThrottleShare.Calls(3, 1, 400),
        runCalls.drain(),
        "every call is counted for the run's governor, the throttled one with its Retry-After");
  }

  @Test
  void aLeavingPoolHandsTheLeaseBackInsteadOfCallingTheProvider() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));

    AttemptResult result = attempt(() -> true);

    assertEquals(new AttemptResult.RetryAt(clock.instant()), result, "offered elsewhere at once");
    assertEquals(List.of(), provider.operations());
    assertEquals(List.of(CLAIM, RELEASE), items.names());
    assertEquals(TOKEN, items.commands().get(1).token());
  }

  @Test
  void aLeavingPoolHandsAnAmbiguousItemBackWithoutLookingItUp() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.AMBIGUOUS));

    assertInstanceOf(AttemptResult.RetryAt.class, attempt(() -> true));

    assertEquals(List.of(), provider.operations(), "the next holder looks it up");
    assertEquals(List.of(CLAIM, RELEASE), items.names(), "nothing marks it otherwise");
  }

  @Test
  void anApplyTheLeaseMayNotOutliveIsNotSentAndTheLeaseIsHandedBack() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    // planning takes until 1.5 s before the lease ends: inside the safety margin (a tenth of the
    // lease, at most 2 s)
    provider.plans(
        () -> {
          clock.advance(LEASE.minus(Duration.ofMillis(1500)));
          return CompletableFuture.completedFuture(Plan.action("void", 10, "hold"));
        });

    AttemptResult result = attempt();

    assertInstanceOf(AttemptResult.RetryAt.class, result);
    assertEquals(List.of("plan"), provider.operations(), "the mutation is never sent");
    assertEquals(List.of(CLAIM, RELEASE), items.names());
  }

  @Test
  void anApplyJustOutsideTheSafetyMarginIsSent() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    provider.plans(
        () -> {
          clock.advance(LEASE.minus(Duration.ofMillis(2500)));
          return CompletableFuture.completedFuture(Plan.action("void", 10, "hold"));
        });

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("plan", "apply"), provider.operations());
  }

  /**
   * A cleanup goes with a deadline: the earlier of its send plus the request timeout and the
   * lease's end less the safety margin (2 s of the 30 s lease), in whole milliseconds.
   */
  @Test
  void aCleanupCarriesTheEarlierOfTheRequestTimeoutAndTheLeasesEndLessTheMargin() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    assertInstanceOf(AttemptResult.Done.class, attempt());
    assertEquals(clock.instant().plusMillis(200), provider.calls().get(1).deadline());

    ScriptedProvider patient = new ScriptedProvider();
    CleanupDeadlines slow = new CleanupDeadlines(Duration.ofMinutes(1), Duration.ofMillis(50));
    Instant asked = clock.instant();
    assertInstanceOf(
        AttemptResult.Done.class,
        attempt(context(items, patient, clock, testKit.system(), slow), () -> false));
    assertEquals(
        asked.plus(LEASE).minusSeconds(2),
        patient.calls().get(1).deadline(),
        "never past the lease the worker holds");
  }

  /**
   * After an ambiguous cleanup the key is looked up only once the cleanup's deadline plus the
   * allowance has passed: a provider may still commit it until the deadline.
   */
  @Test
  void anAmbiguousCleanupIsLookedUpOnlyAfterItsDeadlinePlusTheAllowance() throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    provider
        .applies(() -> ScriptedProvider.failing(new ProviderError.Ambiguous("reset")))
        .applies(() -> CompletableFuture.completedFuture(ScriptedProvider.receipt(ITEM, "e3")));

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("plan", "apply", "lookup", "plan", "apply"), provider.operations());
    long waited =
        TimeUnit.NANOSECONDS.toMillis(
            provider.calls().get(2).atNanos() - provider.calls().get(1).atNanos());
    // the clock stands still here, so the whole wait is the deadline's 200 ms and the 50 ms
    assertTrue(waited >= 250 - 10, "looked up after " + waited + " ms");
    assertTrue(
        ((String) items.commands().get(1).detail()).contains("cleanup deadline"),
        "the mark names the deadline it waits for: " + items.commands().get(1).detail());
  }

  /**
   * A takeover of an AMBIGUOUS item waits until the end of the lease that may have sent a cleanup
   * (as the claim says) plus the allowance, then looks up.
   */
  @Test
  void anAmbiguousItemTakenOverIsLookedUpOnlyAfterTheLastLeasesEndPlusTheAllowance()
      throws Exception {
    Instant previousLeaseEnd = clock.instant().plusMillis(300);
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.AMBIGUOUS, previousLeaseEnd));
    long start = System.nanoTime();

    assertInstanceOf(AttemptResult.Done.class, attempt());

    assertEquals(List.of("lookup", "plan", "apply"), provider.operations());
    long waited = TimeUnit.NANOSECONDS.toMillis(provider.calls().get(0).atNanos() - start);
    assertTrue(waited >= 350 - 10, "looked up after " + waited + " ms");
  }

  /**
   * The incident the deadline prevents, at a provider without idempotency keys: the answer to a
   * cleanup is lost, the provider commits it late but before its deadline, and a lookup right away
   * would have found nothing and applied it a second time. On the real clock.
   */
  @Test
  void aCleanupCommittedLateButBeforeItsDeadlineIsFoundByTheLookupNeverAppliedTwice()
      throws Exception {
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.NONE));
    LateCommitter provider = new LateCommitter(Duration.ofMillis(100));
    CleanupDeadlines deadlines = new CleanupDeadlines(Duration.ofMillis(600), Duration.ZERO);

    AttemptResult result =
        attempt(
            context(items, provider, Clock.systemUTC(), testKit.system(), deadlines), () -> false);

    assertInstanceOf(AttemptResult.Done.class, result);
    assertEquals(1, provider.effects(), "one effect: the late commit was found, not repeated");
    assertEquals(1, provider.applies(), "never sent again");
    assertEquals(OutcomeKind.FOUND_BY_LOOKUP, recorded().outcome().kind());
  }

  /**
   * The same incident on a takeover: the previous holder's cleanup commits late, before the end of
   * the lease it was sent under (its deadline's bound); the new holder's lookup must find it.
   */
  @Test
  void aPreviousHoldersCleanupCommittedLateIsFoundByTheNewHoldersLookup() throws Exception {
    Instant previousLeaseEnd = Instant.now().plusMillis(500);
    claimAnswers(ScriptedItems.claimed(ITEM, TOKEN, EffectStatus.AMBIGUOUS, previousLeaseEnd));
    LateCommitter provider = new LateCommitter(Duration.ofMillis(100));
    provider.commitLate(previousLeaseEnd);
    CleanupDeadlines deadlines = new CleanupDeadlines(Duration.ofMillis(600), Duration.ZERO);

    AttemptResult result =
        attempt(
            context(items, provider, Clock.systemUTC(), testKit.system(), deadlines), () -> false);

    assertInstanceOf(AttemptResult.Done.class, result);
    assertEquals(1, provider.effects());
    assertEquals(0, provider.applies(), "the new holder never applied");
    assertEquals(OutcomeKind.FOUND_BY_LOOKUP, recorded().outcome().kind());
  }
}

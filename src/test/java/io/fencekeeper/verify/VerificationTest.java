package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.ScopePurge;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A verification of a finished run on one node with a real PostgreSQL journal and the simulated
 * provider over real HTTP: what it reports for each kind of discrepancy the sim can be made to
 * have, for an ambiguous effect, for a sample, and how it goes on after its node stopped mid-way.
 * The provider's side is always what the sim's ledger really holds.
 */
class VerificationTest {

  VerifyFixture f;

  @BeforeEach
  void setUp() throws Exception {
    f = new VerifyFixture(dir -> TestDatabases.freshPostgres(), 7);
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  WorkItem.EffectOutcome outcome(ItemId id) {
    WorkItem.Reply reply = f.node.items().get(id).toCompletableFuture().join();
    return assertInstanceOf(WorkItem.Accepted.class, reply).item().effectOutcome();
  }

  @Test
  void aRunThatReallyHappenedAgreesItemForItem() throws Exception {
    // faults that make attempts ambiguous and reconcile: the journal still says what happened
    f.sim.setFaults(SimFaults.NONE.withTimeoutAfterAccept(0.05, 0).withNonIdempotent(true));
    f.startNode(8, Map.of("fencekeeper.lease", "10s"));
    List<AccountCursor> accounts = VerifyFixture.accounts(300);
    RunView run = f.create("agree", accounts);
    assertEquals(RunState.SUCCEEDED, f.awaitEnded(run.runId()).state());
    Map<String, Long> before = f.sim.lookups();

    VerificationView started = f.started(run.runId(), 0, OptionalLong.empty());
    VerificationView done = f.awaitConcluded(run.runId(), started.number());

    assertEquals("AGREE", done.verdict(), done.toString());
    assertEquals(300, done.tally().agree());
    assertEquals(300, done.toCheck());
    assertEquals(List.of(), done.findings());
    assertEquals(List.of(), f.findings(done));
    Map<String, Long> lookups = f.lookupsSince(before);
    assertEquals(300, lookups.size(), "every item's key was looked up");
    assertEquals(Set.of(1L), new TreeSet<>(lookups.values()), "once each");
  }

  @Test
  void eachKindOfDiscrepancyIsFoundAndNamedWithBothSides() throws Exception {
    f.startNode(8, Map.of());
    List<AccountCursor> accounts = VerifyFixture.accounts(200);
    RunView run = f.create("tampered", accounts);
    assertEquals(RunState.SUCCEEDED, f.awaitEnded(run.runId()).state());
    List<ItemId> applied = new ArrayList<>();
    List<ItemId> nothingToDo = new ArrayList<>();
    for (AccountCursor account : accounts) {
      ItemId id = ItemId.of("tampered", VerifyFixture.DATE, account.accountId(), account.cursor());
      WorkItem.EffectOutcome outcome = outcome(id);
      (outcome.kind() == WorkItem.OutcomeKind.NOTHING_TO_DO ? nothingToDo : applied).add(id);
    }
    ItemId lost = applied.get(3);
    ItemId overwritten = applied.get(40);
    ItemId foreign = nothingToDo.get(1);
    String recordedId = outcome(overwritten).providerReference();
    assertTrue(f.sim.loseEffect(lost.idempotencyKey()));
    Receipt written = f.sim.writeForeignEffect(overwritten.idempotencyKey());
    Receipt unexpected = f.sim.writeForeignEffect(foreign.idempotencyKey());

    VerificationView done =
        f.awaitConcluded(run.runId(), f.started(run.runId(), 0, OptionalLong.empty()).number());

    assertEquals("DISCREPANCIES", done.verdict());
    assertEquals(new Tally(197, 1, 1, 1, 0, 0), done.tally());
    Map<String, Finding> byItem =
        f.findings(done).stream().collect(Collectors.toMap(Finding::itemId, f -> f));
    assertEquals(Set.of(lost.value(), overwritten.value(), foreign.value()), byItem.keySet());
    assertEquals(done.findings(), f.findings(done), "the view shows the first ones, in order");

    Finding missing = byItem.get(lost.value());
    assertEquals(Outcome.MISSING, missing.outcome());
    assertEquals(lost.idempotencyKey(), missing.idempotencyKey());
    assertEquals("DONE", missing.journalStatus());
    assertEquals(outcome(lost).providerReference(), missing.journalEffectId());
    assertNull(missing.providerEffectId(), "the provider answered 404");

    Finding different = byItem.get(overwritten.value());
    assertEquals(Outcome.DIFFERENT, different.outcome());
    assertEquals(recordedId, different.journalEffectId());
    assertEquals(written.effectId(), different.providerEffectId());

    Finding surprise = byItem.get(foreign.value());
    assertEquals(Outcome.UNEXPECTED_EFFECT, surprise.outcome());
    assertEquals("NOTHING_TO_DO", surprise.journalOutcome());
    assertEquals(unexpected.effectId(), surprise.providerEffectId());
  }

  @Test
  void anAmbiguousEffectIsResolvedAndWhatTheProviderSaysIsRecorded() throws Exception {
    f.startNode(0, Map.of());
    List<AccountCursor> accounts = VerifyFixture.accounts(6);
    RunView run = f.create("ambiguous", accounts);
    ItemId landed = ItemId.of("ambiguous", VerifyFixture.DATE, accounts.get(0).accountId(), "c-1");
    ItemId neverSent =
        ItemId.of("ambiguous", VerifyFixture.DATE, accounts.get(1).accountId(), "c-2");
    for (ItemId id : List.of(landed, neverSent)) {
      WorkItem.Claimed claim =
          assertInstanceOf(
              WorkItem.Claimed.class,
              f.node
                  .items()
                  .claim(id, "w-1", Duration.ofMinutes(5), 5)
                  .toCompletableFuture()
                  .join());
      f.node
          .items()
          .markAmbiguous(id, "w-1", claim.token(), "timed out after the send")
          .toCompletableFuture()
          .join();
    }
    // the first one's apply did land at the provider; the second never left the worker
    Receipt applied = f.sim.writeForeignEffect(landed.idempotencyKey());
    f.node.runs().cancel(run.runId()).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(RunState.CANCELLED, f.awaitEnded(run.runId()).state());

    VerificationView done =
        f.awaitConcluded(run.runId(), f.started(run.runId(), 0, OptionalLong.empty()).number());

    assertEquals("AGREE", done.verdict(), "a resolution is not a discrepancy");
    assertEquals(new Tally(4, 0, 0, 0, 1, 1), done.tally());
    Map<String, Finding> byItem =
        f.findings(done).stream().collect(Collectors.toMap(Finding::itemId, f -> f));
    assertEquals(Outcome.RESOLVED, byItem.get(landed.value()).outcome());
    assertEquals("AMBIGUOUS", byItem.get(landed.value()).journalEffect());
    assertEquals("CLOSED", byItem.get(landed.value()).journalStatus());
    assertEquals(applied.effectId(), byItem.get(landed.value()).providerEffectId());
    assertEquals(Outcome.RESOLVED, byItem.get(neverSent.value()).outcome());
    assertNull(byItem.get(neverSent.value()).providerEffectId());
  }

  @Test
  void aSampleLooksUpExactlyItsSizeAndTheSameSeedDrawsTheSameItems() throws Exception {
    f.startNode(8, Map.of());
    List<AccountCursor> accounts = VerifyFixture.accounts(400);
    RunView run = f.create("sampled", accounts);
    assertEquals(RunState.SUCCEEDED, f.awaitEnded(run.runId()).state());

    Map<String, Long> before = f.sim.lookups();
    VerificationView first =
        f.awaitConcluded(run.runId(), f.started(run.runId(), 37, OptionalLong.of(99)).number());
    Map<String, Long> firstKeys = f.lookupsSince(before);
    before = f.sim.lookups();
    VerificationView again =
        f.awaitConcluded(run.runId(), f.started(run.runId(), 37, OptionalLong.of(99)).number());
    Map<String, Long> againKeys = f.lookupsSince(before);

    assertEquals(37, first.toCheck());
    assertEquals(37, first.checked());
    assertEquals(99, first.seed());
    assertEquals(400, first.scanned(), "the whole scope was passed through");
    assertEquals(37, firstKeys.size());
    assertEquals(firstKeys.keySet(), againKeys.keySet(), "the same seed, the same items");
    assertEquals(2, again.number());
  }

  @Test
  void aRunWhoseScopeWasPrunedIsIncompleteNotAgreedOnTheRowsLeft() throws Exception {
    f.startNode(8, Map.of());
    List<AccountCursor> accounts = VerifyFixture.accounts(300);
    RunView run = f.create("pruned-first", accounts);
    assertEquals(RunState.SUCCEEDED, f.awaitEnded(run.runId()).state());
    var filed =
        Await.until(
            VerifyFixture.WAIT,
            "the run filed",
            () -> f.node.endedRuns().find(run.runId()),
            found -> found.isPresent());
    // a prune's first batch, as a retention pass deletes it: the first 100 items' rows and events
    ScopePurge.Batch deleted =
        ScopePurge.on(f.node.runItems()).deleteBatch(filed.orElseThrow().record(), 100);
    assertEquals(100, deleted.items());

    VerificationView done =
        f.awaitConcluded(run.runId(), f.started(run.runId(), 0, OptionalLong.empty()).number());

    assertEquals("INCOMPLETE", done.verdict(), done.toString());
    assertEquals(200, done.scanned(), "the rows the prune left");
    assertEquals(
        "only 200 of the run's 300 rows were there to check: the run was pruned before or while"
            + " it was verified",
        done.reason());
  }

  @Test
  void onlyAnEndedRunCanBeVerified() throws Exception {
    f.startNode(0, Map.of());
    RunView run = f.create("still-running", VerifyFixture.accounts(3));

    var notEnded =
        f.node.verifications().start(run.runId(), 0, OptionalLong.empty()).toCompletableFuture();
    var unknown =
        f.node
            .verifications()
            .start("nobody/2026-11-29", 0, OptionalLong.empty())
            .toCompletableFuture();

    assertEquals(
        "run_not_ended",
        assertInstanceOf(VerificationKeeper.Refused.class, notEnded.get(10, TimeUnit.SECONDS))
            .error());
    assertEquals(
        "unknown_run",
        assertInstanceOf(VerificationKeeper.Refused.class, unknown.get(10, TimeUnit.SECONDS))
            .error());
    assertTrue(
        f.node.verifications().get(run.runId(), 0).toCompletableFuture().join().isEmpty(),
        "nothing was started");
  }

  @Test
  void aVerificationWhoseNodeStoppedGoesOnFromItsCheckpointAndLooksNoItemUpThreeTimes()
      throws Exception {
    f.startNode(8, Map.of("fencekeeper.verify.checkpoint-every", "50"));
    List<AccountCursor> accounts = VerifyFixture.accounts(1500);
    RunView run = f.create("resumed", accounts);
    assertEquals(RunState.SUCCEEDED, f.awaitEnded(run.runId()).state());
    Map<String, Long> before = f.sim.lookups();
    f.sim.setFaults(SimFaults.NONE.withLatency(20, 0)); // long enough to stop it mid-way

    VerificationView started = f.started(run.runId(), 0, OptionalLong.empty());
    Await.until(
        VerifyFixture.WAIT,
        "a third of the items checked",
        () ->
            f.node.verifications().get(run.runId(), started.number()).toCompletableFuture().join(),
        v -> v.orElseThrow().checked() >= 500);
    f.node.close();
    long checkedBeforeTheStop =
        f.lookupsSince(before).size(); // looked up before the stop (checkpointed or not)
    f.startNode(8, Map.of("fencekeeper.verify.checkpoint-every", "50"));
    VerificationView done = f.awaitConcluded(run.runId(), started.number());

    assertEquals("AGREE", done.verdict(), done.toString());
    assertEquals(1500, done.tally().agree(), "every item counted once");
    Map<String, Long> lookups = f.lookupsSince(before);
    assertEquals(1500, lookups.size());
    Map<Long, Long> histogram = new HashMap<>();
    lookups.values().forEach(n -> histogram.merge(n, 1L, Long::sum));
    assertTrue(checkedBeforeTheStop < 1500, "it was stopped mid-way: " + checkedBeforeTheStop);
    assertTrue(
        histogram.getOrDefault(1L, 0L) >= 500,
        "the items of its checkpoints were not looked up again: " + histogram);
    assertTrue(
        lookups.values().stream().allMatch(n -> n <= 2),
        "lookups per key (count of keys): " + histogram);
  }
}

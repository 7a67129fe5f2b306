package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.NotClaimable;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import io.fencekeeper.testing.ManualClock;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 51, "a lost claim answer is not a lost holder": a claim repeated with its request id gets
 * the same lease, a claim abandoned unanswered erases no loss, and a lease API holder that spoke
 * elsewhere after its lease ended is not lost, while one that never speaks again is.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LostClaimAnswerTest {

  @JUnit5TestKit
  ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(
              EventSourcedBehaviorTestKit.config()
                  .withFallback(ConfigFactory.parseString(WorkItemTest.SERIALIZATION)))
          .build();

  static final Duration LEASE = Duration.ofSeconds(30);
  static final AtomicInteger ITEMS = new AtomicInteger();

  ManualClock clock;
  ExternalWorkers words;
  EventSourcedBehaviorTestKit<WorkItem.Command, WorkItem.Event, State> kit;

  @BeforeEach
  void newItem() {
    clock = ManualClock.at("2026-11-30T01:00:00Z");
    words = ExternalWorkers.local(clock);
    ItemId itemId =
        ItemId.of(
            "payment-reconciliation",
            LocalDate.parse("2026-11-29"),
            "acct-" + ITEMS.incrementAndGet(),
            "c-1");
    kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(), WorkItem.create(itemId, clock, ItemSettings.defaults(), words));
  }

  CommandResultWithReply<WorkItem.Command, WorkItem.Event, State, Reply> run(
      Function<ActorRef<Reply>, WorkItem.Command> command) {
    return kit.runCommand(command);
  }

  CommandResultWithReply<WorkItem.Command, WorkItem.Event, State, Reply> claim(
      String worker, String requestId) {
    return run(r -> new WorkItem.Claim(worker, LEASE, 5, 0, KeepApart.NOTHING, requestId, r));
  }

  Claimed granted(String worker, String requestId) {
    return assertInstanceOf(Claimed.class, claim(worker, requestId).reply());
  }

  @Test
  void theSameRequestRepeatedWhileItsLeaseRunsGetsThatLeaseAgainNotASecond() {
    Claimed first = granted("ext-1", "r-1");
    clock.advance(Duration.ofSeconds(10));
    var again = claim("ext-1", "r-1");
    Claimed repeated = assertInstanceOf(Claimed.class, again.reply());
    assertEquals(first.token(), repeated.token(), "the same lease");
    assertEquals(first.attempt(), repeated.attempt(), "no attempt used");
    assertEquals(clock.instant().plus(LEASE), repeated.leaseExpiresAt(), "renewed, as Renew does");
    assertEquals(clock.instant(), repeated.answeredAt());
    assertEquals("r-1", repeated.requestId());
    assertTrue(again.events().stream().allMatch(e -> e instanceof WorkItem.LeaseRenewed));
    assertEquals(Status.LEASED, kit.getState().status());
    assertEquals(kit.getState(), kit.restart().state());
  }

  @Test
  void theSameRequestAfterItsLeaseLapsedIsStillThatLeaseAndNoSilentEnd() {
    Claimed first = granted("ext-1", "r-1");
    clock.advance(LEASE.plusSeconds(5));
    Claimed repeated = granted("ext-1", "r-1");
    assertEquals(first.token(), repeated.token(), "nobody else was granted one meanwhile");
    assertEquals(EffectStatus.NONE, repeated.effect(), "nothing happened under it");
    assertEquals(List.of(), kit.getState().budget().silentRun(), "no lease ended in silence");
  }

  @Test
  void anotherRequestOrAnotherWorkerIsAnotherClaim() {
    Claimed first = granted("ext-1", "r-1");
    assertInstanceOf(WorkItem.LeaseHeld.class, claim("ext-1", "r-2").reply());
    assertInstanceOf(WorkItem.LeaseHeld.class, claim("ext-2", "r-1").reply());
    clock.advance(LEASE.plusSeconds(1));
    Claimed taken = granted("ext-2", "r-1");
    assertEquals(first.token() + 1, taken.token());
    assertEquals("ext-1", kit.getState().budget().silentRun().get(0).holder());
  }

  @Test
  void aRequestIdOutsideItsAlphabetIsInvalid() {
    var bad = claim("ext-1", "r 1\n");
    assertEquals("requestId", assertInstanceOf(WorkItem.Invalid.class, bad.reply()).field());
    assertTrue(bad.hasNoEvents());
  }

  /**
   * A poison item killed one holder; the next claim's answer is lost and abandoned: that unused
   * lease neither counts as a loss nor erases the first one, so the next death still quarantines.
   */
  @Test
  void aClaimAbandonedUnansweredErasesNoLossOfAPoisonItem() {
    granted("node-a/w1", null);
    clock.advance(LEASE.plusSeconds(1)); // node a died on it
    granted("node-b/w1", null);
    var abandoned = run(r -> new WorkItem.ClaimAbandoned("node-b/w1", r));
    assertTrue(abandoned.eventOfType(WorkItem.LeaseReleased.class).unused());
    assertEquals(1, kit.getState().budget().consecutiveLosses(), "node a's loss still counts");
    granted("node-c/w1", null);
    clock.advance(LEASE.plusSeconds(1)); // node c died on it too
    var third = claim("node-d/w1", null);
    assertEquals(Status.QUARANTINED, assertInstanceOf(NotClaimable.class, third.reply()).status());
    assertEquals(
        List.of("node-a/w1", "node-c/w1"),
        third.eventOfType(WorkItem.ItemQuarantined.class).lostOwners());
  }

  /**
   * A lease API worker whose claim answer was lost never renewed its lease, which lapsed and was
   * taken over; the worker went on working elsewhere. A second holder then died: the first spoke
   * after its lease ended, so only one holder is lost and the item is not quarantined.
   */
  @Test
  void aLeaseApiHolderThatSpokeElsewhereAfterItsLeaseIsNotLost() {
    granted("ext-1", "r-1"); // its answer never arrived
    clock.advance(LEASE.plusSeconds(1));
    granted("ext-2", "r-7");
    clock.advance(Duration.ofSeconds(5));
    words.heard("ext-1"); // ext-1 claims another item
    clock.advance(LEASE); // ext-2 died on this one
    var next = claim("ext-3", "r-9");
    assertInstanceOf(Claimed.class, next.reply());
    WorkItem.HolderSpokeElsewhere spoke = next.eventOfType(WorkItem.HolderSpokeElsewhere.class);
    assertEquals("ext-1", spoke.workerId());
    assertEquals(1, kit.getState().budget().consecutiveLosses(), "ext-2 alone is lost");
    assertEquals(kit.getState(), kit.restart().state(), "the replay decides the same");
  }

  @Test
  void aLeaseApiHolderThatNeverSpeaksAgainStaysLost() {
    granted("ext-1", "r-1");
    words.heard("ext-1"); // its claim was its last word: it died right after
    clock.advance(LEASE.plusSeconds(1));
    granted("ext-2", "r-2");
    clock.advance(LEASE.plusSeconds(1));
    var third = claim("ext-3", "r-3");
    assertEquals(Status.QUARANTINED, assertInstanceOf(NotClaimable.class, third.reply()).status());
    assertTrue(
        third.events().stream().noneMatch(e -> e instanceof WorkItem.HolderSpokeElsewhere),
        "a word before its lease ended says nothing");
  }

  @Test
  void theHolderOfTheLapsedLeaseHeardElsewhereIsNotLostWhenTakenOver() {
    granted("ext-1", "r-1");
    clock.advance(LEASE.plusSeconds(5));
    words.heard("ext-1");
    var takeover = claim("ext-2", "r-2");
    assertEquals("ext-1", takeover.eventOfType(WorkItem.HolderSpokeElsewhere.class).workerId());
    assertEquals(0, kit.getState().budget().consecutiveLosses());
    assertEquals(1, kit.getState().budget().silentRun().size(), "still a silent end");
    assertNotEquals(0, kit.getState().token());
  }

  @Test
  void recordEffectAndCompleteRepeatedByItsHolderAnswersTheSame() {
    Claimed c = granted("ext-1", "r-1");
    var outcome = WorkItemTest.applied();
    run(r -> new WorkItem.RecordEffectAndComplete("ext-1", c.token(), outcome, r));
    var again = run(r -> new WorkItem.RecordEffectAndComplete("ext-1", c.token(), outcome, r));
    assertEquals(
        Status.DONE, assertInstanceOf(WorkItem.Accepted.class, again.reply()).item().status());
    assertTrue(again.hasNoEvents());
    var other = run(r -> new WorkItem.RecordEffectAndComplete("ext-2", c.token(), outcome, r));
    assertInstanceOf(WorkItem.LeaseLost.class, other.reply());
  }
}

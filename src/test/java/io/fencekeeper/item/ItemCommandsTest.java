package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.item.WorkItem.Accepted;
import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.item.WorkItem.LeaseLost;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import io.fencekeeper.testing.ManualClock;
import java.time.Duration;
import java.time.LocalDate;
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
 * The work item's answers where {@link WorkItemTest} (every command in every state that matters)
 * leaves a corner: a completion repeated by another worker once the item is DONE is a lost lease,
 * audited, not the holder's same answer; a retryable failure without a wait is claimable at once
 * and its throttled answers are journaled; a close says why even without a reason and keeps a long
 * one to the audit's limit; a resume's reopen leaves an item that is neither CLOSED nor FAILED as
 * it is. On the persistence test kit, every message serialized.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ItemCommandsTest {

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
  EventSourcedBehaviorTestKit<WorkItem.Command, WorkItem.Event, State> kit;

  @BeforeEach
  void newItem() {
    clock = ManualClock.at("2026-11-30T01:00:00Z");
    ItemId itemId =
        ItemId.of(
            "payment-reconciliation",
            LocalDate.parse("2026-11-29"),
            "acct-" + ITEMS.incrementAndGet(),
            "c-1");
    kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(), WorkItem.create(itemId, clock, ItemSettings.defaults()));
  }

  CommandResultWithReply<WorkItem.Command, WorkItem.Event, State, Reply> run(
      Function<ActorRef<Reply>, WorkItem.Command> command) {
    return kit.runCommand(command);
  }

  Claimed claim(String worker) {
    return assertInstanceOf(
        Claimed.class, run(r -> new WorkItem.Claim(worker, LEASE, 5, 0, r)).reply());
  }

  /**
   * The claim of an AMBIGUOUS item says from when its key may be looked up: the end of the last
   * lease that may have sent a cleanup (released early, or taken over once it lapsed). A claim of
   * an item whose effect is not AMBIGUOUS says nothing of it.
   */
  @Test
  void aClaimOfAnAmbiguousItemSaysFromWhenItsKeyMayBeLookedUp() {
    Claimed first = claim("w-1");
    assertNull(first.lookupAfter(), "nothing was sent before: no bound");
    run(r -> new WorkItem.MarkAmbiguous("w-1", first.token(), "reset after the send", r));
    run(r -> new WorkItem.Release("w-1", first.token(), r));

    Claimed second = claim("w-2");

    assertEquals(WorkItem.EffectStatus.AMBIGUOUS, second.effect());
    assertEquals(first.leaseExpiresAt(), second.lookupAfter(), "the released lease's end");

    clock.advance(LEASE.plusSeconds(1));
    Claimed third = claim("w-3");
    assertTrue(third.takeover());
    assertEquals(second.leaseExpiresAt(), third.lookupAfter(), "the lapsed lease's end");
    assertTrue(
        !third.lookupAfter().isAfter(clock.instant()),
        "taken over after it lapsed: nothing left to wait but the allowance");
  }

  @Test
  void aCompletionRepeatedByAnotherWorkerOnceTheItemIsDoneIsALostLease() {
    Claimed held = claim("w-1");
    run(r -> new WorkItem.RecordEffectAndComplete("w-1", held.token(), WorkItemTest.applied(), r));

    var repeated = run(r -> new WorkItem.Complete("w-2", held.token(), r));

    LeaseLost lost = assertInstanceOf(LeaseLost.class, repeated.reply());
    assertEquals(held.token(), lost.currentToken());
    WorkItem.StaleCommandRejected audit = repeated.eventOfType(WorkItem.StaleCommandRejected.class);
    assertEquals("w-2", audit.workerId(), "the audit names who tried");
    assertEquals(Status.DONE, kit.getState().status());
    assertEquals("w-1", kit.getState().owner(), "the item stays its holder's");
  }

  @Test
  void aRetryableFailureWithoutAWaitIsClaimableAtOnceAndItsThrottlesAreJournaled() {
    Claimed first = claim("w-1");

    var failed =
        run(
            r ->
                new WorkItem.Fail(
                    "w-1", first.token(), "HTTP 429 three times", true, Duration.ZERO, 3, r));

    WorkItem.AttemptFailed event = failed.eventOfType(WorkItem.AttemptFailed.class);
    assertNull(event.retryAt(), "no wait asked for: no backoff");
    assertEquals(3, event.throttles(), "the run counts the throttled answers");
    assertEquals(Status.PENDING, kit.getState().status());
    Claimed second = claim("w-2");
    assertEquals(2, second.attempt());
    assertEquals(first.token() + 1, second.token());
  }

  @Test
  void aCloseSaysWhyEvenWithoutAReasonAndKeepsALongOneToTheAuditsLimit() {
    var unexplained = run(r -> new WorkItem.Close(null, r));
    assertEquals("closed", unexplained.eventOfType(WorkItem.ItemClosed.class).reason());

    run(r -> new WorkItem.Reopen(r));
    String longReason = "deadline passed: " + "x".repeat(2000);
    var explained = run(r -> new WorkItem.Close(longReason, r));

    assertEquals(
        longReason.substring(0, 1000), explained.eventOfType(WorkItem.ItemClosed.class).reason());
    assertEquals(Status.CLOSED, kit.getState().status());
  }

  @Test
  void aReopenLeavesAnItemThatIsNeitherClosedNorFailedAsItIs() {
    Claimed held = claim("w-1");
    var whileLeased = run(r -> new WorkItem.Reopen(r));
    assertTrue(whileLeased.hasNoEvents());
    assertEquals(
        Status.LEASED, assertInstanceOf(Accepted.class, whileLeased.reply()).item().status());

    run(r -> new WorkItem.RecordEffectAndComplete("w-1", held.token(), WorkItemTest.applied(), r));
    var whenDone = run(r -> new WorkItem.Reopen(r));

    assertTrue(whenDone.hasNoEvents(), "a resume never redoes a DONE item");
    assertEquals(Status.DONE, assertInstanceOf(Accepted.class, whenDone.reply()).item().status());
  }
}

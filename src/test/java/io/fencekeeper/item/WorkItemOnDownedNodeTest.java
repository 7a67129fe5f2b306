package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.item.WorkItem.Accepted;
import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.LeaseLost;
import io.fencekeeper.item.WorkItem.NotClaimable;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import io.fencekeeper.testing.ManualClock;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An item whose node was downed writes nothing more (docs/design.md, "A downed node writes
 * nothing"): its holder's commands are refused LeaseLost, a claim NotClaimable, the coordinator's
 * commands go unanswered, and none of it is journaled or changes the item, so the item's next
 * incarnation on a live node finds it exactly as the downed one left it.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkItemOnDownedNodeTest {

  @JUnit5TestKit
  ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(
              EventSourcedBehaviorTestKit.config()
                  .withFallback(ConfigFactory.parseString(WorkItemTest.SERIALIZATION)))
          .build();

  static final Duration LEASE = Duration.ofSeconds(30);

  @Test
  void aDownedNodesItemRefusesEveryWriteAndJournalsNothing() {
    ManualClock clock = ManualClock.at("2026-11-30T01:00:00Z");
    AtomicBoolean downed = new AtomicBoolean();
    ItemId itemId =
        ItemId.of("payment-reconciliation", LocalDate.parse("2026-11-29"), "acct-downed", "c-1");
    EventSourcedBehaviorTestKit<WorkItem.Command, WorkItem.Event, State> kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(), WorkItem.create(itemId, clock, ItemSettings.defaults(), downed::get));
    Claimed claimed =
        assertInstanceOf(
            Claimed.class,
            kit.<Reply>runCommand(r -> new WorkItem.Claim("w-1", LEASE, 5, 0, r)).reply());
    EffectOutcome applied = new EffectOutcome(OutcomeKind.APPLIED, "eff-1", "voided");

    downed.set(true);
    for (Function<ActorRef<Reply>, WorkItem.Command> command :
        List.<Function<ActorRef<Reply>, WorkItem.Command>>of(
            r -> new WorkItem.Renew("w-1", claimed.token(), LEASE, r),
            r -> new WorkItem.RecordEffectAndComplete("w-1", claimed.token(), applied, 0, r),
            r -> new WorkItem.Release("w-1", claimed.token(), r))) {
      var result = kit.runCommand(command);
      LeaseLost lost = assertInstanceOf(LeaseLost.class, result.reply());
      assertEquals(LeaseRules.NODE_DOWNED, lost.reason());
      assertEquals(claimed.token(), lost.currentToken(), "the token is not bumped");
      assertTrue(result.hasNoEvents(), "nothing journaled for " + result.command());
    }
    clock.advance(LEASE.plusSeconds(1)); // the lease ran out: a live node would grant a takeover
    var claim = kit.<Reply>runCommand(r -> new WorkItem.Claim("w-2", LEASE, 5, 0, r));
    NotClaimable refused = assertInstanceOf(NotClaimable.class, claim.reply());
    assertEquals(LeaseRules.NODE_DOWNED, refused.reason());
    assertTrue(claim.hasNoEvents(), "no takeover on a downed node");

    TestProbe<Reply> coordinator = testKit.createTestProbe();
    assertTrue(
        kit.runCommand(new WorkItem.Close("deadline", coordinator.ref())).hasNoEvents(),
        "the deadline's close is left to the item's next host");
    coordinator.expectNoMessage(Duration.ofMillis(200));
    assertEquals(Status.LEASED, kit.getState().status());
    assertEquals("w-1", kit.getState().owner());
    assertEquals(claimed.token(), kit.getState().token());

    downed.set(false); // the same journal read by a live incarnation: nothing happened meanwhile
    Claimed takeover =
        assertInstanceOf(
            Claimed.class,
            kit.<Reply>runCommand(r -> new WorkItem.Claim("w-2", LEASE, 5, 0, r)).reply());
    Accepted done =
        assertInstanceOf(
            Accepted.class,
            kit.<Reply>runCommand(
                    r ->
                        new WorkItem.RecordEffectAndComplete(
                            "w-2", takeover.token(), applied, 0, r))
                .reply());
    assertEquals(Status.DONE, done.item().status());
    assertEquals(claimed.token() + 1, kit.getState().token(), "one takeover, one token");
  }
}

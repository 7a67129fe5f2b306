package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.Event;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How each event changes an item's state, through the event handler the entity recovers with (so
 * the table of events to transitions is tested too), without an entity or an actor system.
 */
class StateChangeTest {

  static final Instant T0 = Instant.parse("2026-11-29T01:00:00Z");
  static final Duration LEASE = Duration.ofSeconds(10);
  static final String W1 = "pekko://fencekeeper@10.0.0.7:25520/w1";
  static final String W2 = "pekko://fencekeeper@10.0.0.8:25520/w2";
  static final EffectOutcome APPLIED = new EffectOutcome(OutcomeKind.APPLIED, "r-1", "voided");

  static State after(State from, Event... events) {
    State state = from;
    for (Event event : events) {
      state = StateChange.eventHandler().apply(state, event);
    }
    return state;
  }

  /** The next claim of {@code from}, by {@code worker} at {@code at}. */
  static WorkItem.LeaseGranted grant(State from, String worker, Instant at) {
    return new WorkItem.LeaseGranted(
        worker,
        from.token() + 1,
        from.attempt() + 1,
        5,
        at.plus(LEASE),
        LeaseRules.holder(from),
        0,
        at);
  }

  static State leasedBy(String worker) {
    return after(State.initial(), grant(State.initial(), worker, T0));
  }

  @Test
  void aLeaseGrantedToANewHolderEndsTheSilentHoldersAttemptAsLost() {
    State silent = leasedBy(W1);
    Instant later = T0.plusSeconds(11);

    State takenOver = after(silent, grant(silent, W2, later));

    assertEquals(Status.LEASED, takenOver.status());
    assertEquals(W2, takenOver.owner());
    assertEquals(2, takenOver.token());
    assertEquals(2, takenOver.attempt());
    assertEquals(later.plus(LEASE), takenOver.leaseExpiresAt());
    assertFalse(takenOver.outcomeReported(), "W2 has said nothing yet");
    assertEquals(EffectStatus.AMBIGUOUS, takenOver.effect(), "W1 may have applied it");
    assertEquals(List.of(W1), takenOver.budget().lostHolders());
    assertEquals(1, takenOver.budget().consecutiveLosses());

    State released = after(silent, new WorkItem.LeaseReleased(1, T0.plusSeconds(2)));
    State afterRelease = after(released, grant(released, W2, later));
    assertEquals(List.of(), afterRelease.budget().lostHolders(), "W1 gave the item back");
    assertEquals(EffectStatus.NONE, afterRelease.effect());

    State alive = after(silent, new WorkItem.HolderNodeAlive(W1, 1, later));
    State afterAlive = after(alive, grant(alive, W2, later));
    assertEquals(List.of(), afterAlive.budget().lostHolders(), "W1's node was still up");
    assertEquals(1, afterAlive.budget().silentRun().size(), "its lease still ended in silence");
  }

  @Test
  void aRecordedEffectStaysRecordedOverALaterAmbiguityAndATakeover() {
    State recorded = after(leasedBy(W1), new WorkItem.EffectRecorded(1, APPLIED, false, T0));

    State doubted = after(recorded, new WorkItem.MarkedAmbiguous(1, "timed out", T0));

    assertEquals(EffectStatus.RECORDED, doubted.effect());
    assertEquals(APPLIED, doubted.effectOutcome());
    assertEquals("timed out", doubted.lastError());
    State takenOver = after(doubted, grant(doubted, W2, T0.plusSeconds(11)));
    assertEquals(EffectStatus.RECORDED, takenOver.effect(), "never sent to the provider again");
    assertEquals(List.of(), takenOver.budget().lostHolders(), "W1 reported before it lapsed");

    State unrecorded = after(leasedBy(W1), new WorkItem.MarkedAmbiguous(1, "timed out", T0));
    assertEquals(EffectStatus.AMBIGUOUS, unrecorded.effect());
  }

  @Test
  void aCompletionCarriesItsEffectOrKeepsTheOneRecordedBefore() {
    State done = after(leasedBy(W1), new WorkItem.ItemCompleted(1, APPLIED, false, 0, T0));
    assertEquals(Status.DONE, done.status());
    assertEquals(EffectStatus.RECORDED, done.effect());
    assertEquals(APPLIED, done.effectOutcome());

    State twoStep =
        after(
            leasedBy(W1),
            new WorkItem.EffectRecorded(1, APPLIED, false, T0),
            new WorkItem.ItemCompleted(1, null, false, 0, T0));
    assertEquals(done, twoStep, "the lease API's two steps make the same item");
  }

  @Test
  void aLateHolderHeardLiftsAQuarantineThatNoLongerHolds() {
    State first = leasedBy(W1);
    State second = after(first, grant(first, W2, T0.plusSeconds(11)));
    Instant now = T0.plusSeconds(22);
    State quarantined =
        after(
            second,
            new WorkItem.ItemQuarantined(
                3, "holder lost 2 times in a row", List.of(W1, W2), W2, now));
    assertEquals(Status.QUARANTINED, quarantined.status());
    assertEquals(3, quarantined.token(), "W2 is fenced off");
    assertNull(quarantined.owner());
    assertEquals(List.of(W1, W2), quarantined.budget().lostHolders());

    State lifted = after(quarantined, new WorkItem.LateHolderHeard(W1, 1, true, now));

    assertEquals(Status.PENDING, lifted.status());
    assertEquals(Quarantine.liftReason(W1, 1), lifted.lastError());
    assertEquals(List.of(W2), lifted.budget().lostHolders());
    assertEquals(3, lifted.token());

    State stillHeld = after(quarantined, new WorkItem.LateHolderHeard(W1, 1, false, now));
    assertEquals(Status.QUARANTINED, stillHeld.status(), "the quarantine still holds");
    assertEquals(List.of(W2), stillHeld.budget().lostHolders(), "but W1 is lost no more");
  }

  @Test
  void aCloseFencesTheTokenAndEndsASilentLeaseAsLost() {
    State silent = leasedBy(W1);

    State closed = after(silent, new WorkItem.ItemClosed(2, "deadline", W1, T0.plusSeconds(3)));

    assertEquals(Status.CLOSED, closed.status());
    assertEquals(2, closed.token());
    assertNull(closed.owner());
    assertNull(closed.leaseExpiresAt());
    assertEquals("deadline", closed.closedReason());
    assertEquals(EffectStatus.AMBIGUOUS, closed.effect(), "W1 may have applied it");
    assertEquals(List.of(W1), closed.budget().lostHolders());
    assertTrue(
        LeaseRules.staleReason(
                closed, new WorkItem.Complete(W1, 1, null), T0.plusSeconds(4), LeaseRules.Need.LIVE)
            .isPresent(),
        "W1's token no longer counts");
  }

  @Test
  void reopenAndRetryStartANewBudgetAndKeepTheEffectAndTheLastError() {
    State first = leasedBy(W1);
    State second = after(first, grant(first, W2, T0.plusSeconds(11)));
    State failed =
        after(
            second,
            new WorkItem.AttemptsExhausted(
                3, "attempts used up", List.of(W1, W2), W2, T0.plusSeconds(22)));
    assertEquals(Status.FAILED, failed.status());
    assertEquals(List.of(W1, W2), failed.budget().lostHolders());

    State retried = after(failed, new WorkItem.RetryRequested(T0.plusSeconds(30)));

    assertEquals(Status.PENDING, retried.status());
    assertEquals(AttemptBudget.startingAfter(2), retried.budget(), "attempts 1 and 2 are spent");
    assertEquals(EffectStatus.AMBIGUOUS, retried.effect(), "the next holder reconciles first");
    assertEquals("attempts used up", retried.lastError());
    assertEquals(3, retried.token());

    State closed = after(second, new WorkItem.ItemClosed(3, "cancelled", W2, T0.plusSeconds(22)));
    State reopened = after(closed, new WorkItem.ItemReopened(Status.CLOSED, T0.plusSeconds(30)));
    assertEquals(Status.PENDING, reopened.status());
    assertEquals(AttemptBudget.startingAfter(2), reopened.budget());
    assertNull(reopened.closedReason());
  }

  /**
   * Every cleanup a holder sends has a deadline no later than its lease's end: a lease that ends
   * leaving the effect AMBIGUOUS tells the next holder, by {@code lookupAfter}, from when a lookup
   * of the key is final (docs/provider-protocol.md, "The deadline").
   */
  @Test
  void aLeaseThatEndsWithTheEffectAmbiguousLeavesItsEndAsTheLookupBound() {
    State silent = leasedBy(W1);
    Instant expiry = silent.leaseExpiresAt();
    State takenOver = after(silent, grant(silent, W2, T0.plusSeconds(11)));
    assertEquals(expiry, takenOver.lookupAfter(), "a takeover: the lapsed lease's end");

    State marked = after(silent, new WorkItem.MarkedAmbiguous(1, "timed out", T0.plusSeconds(3)));
    State renewed =
        after(marked, new WorkItem.LeaseRenewed(1, T0.plusSeconds(14), T0.plusSeconds(4)));
    State released = after(renewed, new WorkItem.LeaseReleased(1, T0.plusSeconds(5)));
    assertEquals(
        T0.plusSeconds(14), released.lookupAfter(), "a release: the lease's end as renewed");
    State failed =
        after(
            renewed,
            new WorkItem.AttemptFailed(
                1, "lookups failed", true, false, null, 0, T0.plusSeconds(5)));
    assertEquals(T0.plusSeconds(14), failed.lookupAfter(), "a failure gives the same bound");
    State closed = after(silent, new WorkItem.ItemClosed(2, "cancelled", W1, T0.plusSeconds(5)));
    assertEquals(expiry, closed.lookupAfter(), "a close of a live lease: its end");

    // the next lease's own end counts only once it ends too: the bound only ever grows
    State second = after(released, grant(released, W2, T0.plusSeconds(6)));
    assertEquals(T0.plusSeconds(14), second.lookupAfter());
    State secondLapsed = after(second, grant(second, W1, T0.plusSeconds(20)));
    assertEquals(T0.plusSeconds(16), secondLapsed.lookupAfter());

    State clean = after(silent, new WorkItem.LeaseReleased(1, T0.plusSeconds(2)));
    assertNull(clean.lookupAfter(), "nothing may have been sent: no bound");
  }

  @Test
  void aRejectedStaleCommandChangesNothing() {
    State held = leasedBy(W1);
    State same =
        after(held, new WorkItem.StaleCommandRejected("Complete", W2, 1, 1, "not its holder", T0));
    assertSame(held, same);
  }
}

package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.WorkItem.AttemptsExhausted;
import io.fencekeeper.item.WorkItem.HolderNodeAlive;
import io.fencekeeper.item.WorkItem.ItemQuarantined;
import io.fencekeeper.item.WorkItem.LateHolderHeard;
import io.fencekeeper.item.WorkItem.LeaseGranted;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** "Lost holders count" on states built from events, without an entity or an actor system. */
class QuarantineTest {

  static final Instant T0 = Instant.parse("2026-11-29T01:00:00Z");
  static final Duration LEASE = Duration.ofSeconds(10);
  static final String W1 = "pekko://fencekeeper@10.0.0.7:25520/w1";
  static final String W2 = "pekko://fencekeeper@10.0.0.8:25520/w2";
  static final String W3 = "pekko://fencekeeper@10.0.0.9:25520/w3";

  /** A claim by {@code worker} (of node incarnation {@code incarnation}) at {@code at}. */
  static State claimed(State from, String worker, long incarnation, Instant at) {
    return StateChange.leaseGranted(
        from,
        new LeaseGranted(
            worker,
            from.token() + 1,
            from.attempt() + 1,
            5,
            at.plus(LEASE),
            LeaseRules.holder(from),
            incarnation,
            at));
  }

  /** W1 then W2 each claimed the item and vanished: both leases lapsed without a word. */
  static State twoSilentHolders() {
    return claimed(claimed(State.initial(), W1, 0, T0), W2, 0, T0.plusSeconds(11));
  }

  @Test
  void theKthHolderLostInARowQuarantinesTheItemAtTheNextClaim() {
    State item = twoSilentHolders();
    Instant now = T0.plusSeconds(22);

    Quarantine.Refusal refusal = Quarantine.atClaim(item, 5, 2, now).orElseThrow();

    ItemQuarantined event = assertInstanceOf(ItemQuarantined.class, refusal.event());
    assertEquals(List.of(W1, W2), event.lostOwners());
    assertEquals(W2, event.previousOwner(), "the lapsed lease it ends");
    assertEquals(item.token() + 1, event.newToken(), "the last holder is fenced off");
    assertEquals(Status.QUARANTINED, refusal.answer().status());
    assertEquals(
        "holder lost 2 times in a row ("
            + W1
            + ", "
            + W2
            + "); quarantined until an operator"
            + " retries it",
        refusal.answer().reason());
    assertEquals(Status.QUARANTINED, StateChange.quarantined(item, event).status());
    // with K = 3 (or 0: never) the same item gets its third holder
    assertEquals(Optional.empty(), Quarantine.atClaim(item, 5, 3, now));
    assertEquals(Optional.empty(), Quarantine.atClaim(item, 5, 0, now));
  }

  @Test
  void aClaimPastTheAttemptLimitFailsTheItemNamingItsLostHolders() {
    State item = twoSilentHolders();

    Quarantine.Refusal refusal = Quarantine.atClaim(item, 2, 0, T0.plusSeconds(22)).orElseThrow();

    AttemptsExhausted event = assertInstanceOf(AttemptsExhausted.class, refusal.event());
    assertEquals(List.of(W1, W2), event.previousOwners());
    assertEquals(Status.FAILED, refusal.answer().status());
    assertEquals(
        "holder lost 2 times (" + W1 + ", " + W2 + "); attempts used up: 2 of 2",
        refusal.answer().reason());
  }

  @Test
  void aSilentHolderWhoseNodeIsStillAnUpMemberIsNotLost() {
    State item = claimed(claimed(State.initial(), W1, 0, T0), W2, 42, T0.plusSeconds(11));
    Instant now = T0.plusSeconds(22);
    HolderNodes w2Alive = (worker, incarnation) -> worker.equals(W2) && incarnation == 42;

    HolderNodeAlive alive = Quarantine.holderNodeAlive(item, w2Alive, now).orElseThrow();
    assertEquals(W2, alive.workerId());
    State judged = StateChange.holderNodeAlive(item, alive);
    assertEquals(Optional.empty(), Quarantine.atClaim(judged, 5, 2, now), "only W1 is lost");
    assertEquals(List.of(W1), claimed(judged, W3, 0, now).budget().lostHolders());

    assertEquals(
        Optional.empty(),
        Quarantine.holderNodeAlive(item, HolderNodes.UNKNOWN, now),
        "a node nobody can read counts as lost");
    State unknownNode = claimed(claimed(State.initial(), W1, 0, T0), W2, 0, T0.plusSeconds(11));
    assertEquals(
        Optional.empty(),
        Quarantine.holderNodeAlive(unknownNode, (worker, incarnation) -> true, now),
        "a holder whose incarnation was not journaled (a lease API worker) counts as lost");
  }

  @Test
  void aHolderThatSpeaksAfterItsLeaseLapsedIsNotLostWhenItIsTakenOver() {
    State item = claimed(State.initial(), W1, 0, T0);
    WorkItem.Complete late = new WorkItem.Complete(W1, 1, null);

    LateHolderHeard heard = Quarantine.lateWord(item, late, T0.plusSeconds(12), 2).orElseThrow();
    assertEquals(W1, heard.workerId());
    assertFalse(heard.quarantineLifted());
    State forgiven = StateChange.lateHolderHeard(item, heard);
    assertEquals(
        Optional.empty(),
        Quarantine.lateWord(forgiven, late, T0.plusSeconds(13), 2),
        "heard once is enough");
    assertEquals(List.of(), claimed(forgiven, W2, 0, T0.plusSeconds(14)).budget().lostHolders());
    assertEquals(
        Optional.empty(),
        Quarantine.lateWord(item, late, T0.plusSeconds(5), 2),
        "a holder within its lease is not late");
  }

  @Test
  void aLostHolderThatComesBackLiftsAQuarantineThatNoLongerHolds() {
    State item = twoSilentHolders();
    Instant now = T0.plusSeconds(22);
    State quarantined =
        StateChange.quarantined(
            item, (ItemQuarantined) Quarantine.atClaim(item, 5, 2, now).orElseThrow().event());

    LateHolderHeard back =
        Quarantine.lateWord(quarantined, new WorkItem.Renew(W1, 1, LEASE, null), now, 2)
            .orElseThrow();

    assertTrue(back.quarantineLifted());
    State lifted = StateChange.lateHolderHeard(quarantined, back);
    assertEquals(Status.PENDING, lifted.status());
    assertEquals(Quarantine.liftReason(W1, 1), lifted.lastError());
    assertEquals(List.of(W2), lifted.budget().lostHolders());
    assertEquals(
        Optional.empty(),
        Quarantine.lateWord(quarantined, new WorkItem.Renew(W3, 1, LEASE, null), now, 2),
        "a worker that never held the item says nothing about its holders");
  }
}

package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.LeaseRules.Need;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.LeaseGranted;
import io.fencekeeper.item.WorkItem.LeaseHeld;
import io.fencekeeper.item.WorkItem.NotClaimable;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The lease rule on states built from events, without an entity or an actor system. */
class LeaseRulesTest {

  static final Instant T0 = Instant.parse("2026-11-29T01:00:00Z");
  static final String W1 = "pekko://fencekeeper@10.0.0.7:25520/w1";
  static final String W2 = "pekko://fencekeeper@10.0.0.8:25520/w2";

  /** The item as a claim by {@code worker} at {@code at} for {@code lease} leaves it. */
  static State leased(State from, String worker, Instant at, Duration lease) {
    return StateChange.leaseGranted(
        from,
        new LeaseGranted(
            worker, from.token() + 1, from.attempt() + 1, 5, at.plus(lease), null, 0, at));
  }

  static WorkItem.Complete complete(String worker, long token) {
    return new WorkItem.Complete(worker, token, null);
  }

  static WorkItem.MarkAmbiguous ambiguous(String worker, long token) {
    return new WorkItem.MarkAmbiguous(worker, token, "timed out", null);
  }

  @Test
  void aLiveLeaseRefusesAClaimAndALapsedOneIsTakenOver() {
    State held = leased(State.initial(), W1, T0, Duration.ofSeconds(10));

    LeaseHeld refused =
        assertInstanceOf(
            LeaseHeld.class, LeaseRules.claimRefusal(held, T0.plusSeconds(9)).orElseThrow());
    assertEquals(W1, refused.owner());
    assertEquals(1, refused.currentToken());
    // the lease ends at its expiry instant, not a moment later
    assertEquals(Optional.empty(), LeaseRules.claimRefusal(held, T0.plusSeconds(10)));
    WorkItem.Claim byW2 = new WorkItem.Claim(W2, Duration.ofSeconds(10), 5, 9, null);
    LeaseGranted takeover = LeaseRules.grant(held, byW2, T0.plusSeconds(10));
    assertEquals(W1, takeover.previousOwner(), "the claim after expiry takes over from W1");
    assertEquals(2, takeover.token(), "a new token fences W1 off");
    assertEquals(2, takeover.attempt());
    assertEquals(T0.plusSeconds(20), takeover.leaseExpiresAt());
    assertEquals(9, takeover.holderIncarnation());
    assertNull(
        LeaseRules.grant(State.initial(), byW2, T0).previousOwner(),
        "a PENDING item has nobody to take over from");
  }

  @Test
  void anItemThatIsNotOpenOrBacksOffIsNotClaimable() {
    State done =
        StateChange.completed(
            leased(State.initial(), W1, T0, Duration.ofSeconds(10)),
            new WorkItem.ItemCompleted(
                1, new EffectOutcome(OutcomeKind.APPLIED, "r-1", null), false, 0, T0));
    NotClaimable doneAnswer =
        assertInstanceOf(NotClaimable.class, LeaseRules.claimRefusal(done, T0).orElseThrow());
    assertEquals(Status.DONE, doneAnswer.status());

    State backingOff =
        StateChange.attemptFailed(
            leased(State.initial(), W1, T0, Duration.ofSeconds(10)),
            new WorkItem.AttemptFailed(1, "429", true, false, T0.plusSeconds(30), 1, T0));
    NotClaimable wait =
        assertInstanceOf(
            NotClaimable.class, LeaseRules.claimRefusal(backingOff, T0.plusSeconds(29)).get());
    assertEquals(T0.plusSeconds(30), wait.retryAt());
    assertEquals(Optional.empty(), LeaseRules.claimRefusal(backingOff, T0.plusSeconds(30)));
  }

  @Test
  void onlyTheCurrentTokenOfItsHolderWhileLiveCounts() {
    State first = leased(State.initial(), W1, T0, Duration.ofSeconds(10));
    State second = leased(first, W2, T0.plusSeconds(11), Duration.ofSeconds(10));
    Instant now = T0.plusSeconds(12);

    assertEquals(
        Optional.of("token 1 is not the current token 2"),
        LeaseRules.staleReason(second, complete(W1, 1), now, Need.LIVE));
    assertEquals(
        Optional.of("token 2 is not held by worker " + W1),
        LeaseRules.staleReason(second, complete(W1, 2), now, Need.LIVE));
    assertEquals(Optional.empty(), LeaseRules.staleReason(second, complete(W2, 2), now, Need.LIVE));
    assertEquals(
        Optional.of("lease expired at " + T0.plusSeconds(21)),
        LeaseRules.staleReason(second, complete(W2, 2), T0.plusSeconds(21), Need.LIVE));
  }

  @Test
  void aLapsedHolderMayStillSayItsCallIsAmbiguousButNothingElse() {
    State held = leased(State.initial(), W1, T0, Duration.ofSeconds(10));
    Instant late = T0.plusSeconds(15);

    assertEquals(
        Optional.empty(),
        LeaseRules.staleReason(held, ambiguous(W1, 1), late, Need.MAY_HAVE_LAPSED));
    assertTrue(LeaseRules.staleReason(held, complete(W1, 1), late, Need.LIVE).isPresent());
    assertTrue(LeaseRules.lapsedHolder(held, complete(W1, 1), late));
    assertFalse(LeaseRules.lapsedHolder(held, complete(W1, 1), T0.plusSeconds(5)));
    assertFalse(LeaseRules.lapsedHolder(held, complete(W2, 1), late), "not its holder");
    // a stranger is refused however it asks
    assertTrue(
        LeaseRules.staleReason(held, ambiguous(W2, 1), late, Need.MAY_HAVE_LAPSED).isPresent());
  }

  @Test
  void aRenewalNeverShortensTheLease() {
    State held = leased(State.initial(), W1, T0, Duration.ofSeconds(30));

    assertEquals(
        T0.plusSeconds(30),
        LeaseRules.renewedUntil(held, T0.plusSeconds(5), Duration.ofSeconds(10)),
        "a shorter renewal keeps the longer lease");
    assertEquals(
        T0.plusSeconds(45),
        LeaseRules.renewedUntil(held, T0.plusSeconds(15), Duration.ofSeconds(30)));
  }

  @Test
  void aLeaseThatEndsWithoutAWordLeavesTheEffectAmbiguousAndARecordStays() {
    State silent = leased(State.initial(), W1, T0, Duration.ofSeconds(10));
    assertEquals(EffectStatus.AMBIGUOUS, LeaseRules.effectAfterLeaseEnds(silent));
    State takenOver = leased(silent, W2, T0.plusSeconds(11), Duration.ofSeconds(10));
    assertEquals(EffectStatus.AMBIGUOUS, takenOver.effect(), "the next holder must reconcile");

    State recorded =
        StateChange.effectRecorded(
            silent,
            new WorkItem.EffectRecorded(
                1, new EffectOutcome(OutcomeKind.APPLIED, "r-1", null), false, T0));
    assertEquals(EffectStatus.RECORDED, LeaseRules.effectAfterLeaseEnds(recorded));
  }

  @Test
  void anAbandonedClaimGoesBackOnlyIfItWasGrantedToThatWorkerAndNotUsed() {
    State held = leased(State.initial(), W1, T0, Duration.ofSeconds(10));
    assertTrue(LeaseRules.grantedUnused(held, W1));
    assertFalse(LeaseRules.grantedUnused(held, W2));
    State used =
        StateChange.markedAmbiguous(held, new WorkItem.MarkedAmbiguous(1, "timed out", T0));
    assertFalse(LeaseRules.grantedUnused(used, W1), "it spoke with its token: it learnt it");
  }

  @Test
  void aDownedNodeRefusesWithoutWritingAndNamesWhy() {
    State held = leased(State.initial(), W1, T0, Duration.ofSeconds(10));
    NotClaimable claim = LeaseRules.claimOnDownedNode(held, T0);
    assertEquals(LeaseRules.NODE_DOWNED, claim.reason());
    assertEquals(T0.plus(LeaseRules.DOWNED_RETRY), claim.retryAt(), "asked again once moved");
    WorkItem.LeaseLost lost = LeaseRules.leaseOnDownedNode(held, complete(W1, 1));
    assertEquals(LeaseRules.NODE_DOWNED, lost.reason());
    assertEquals(1, lost.currentToken());
  }

  @Test
  void aClaimNamesTheFieldItGotWrong() {
    Duration max = Duration.ofHours(1);
    assertEquals(
        "workerId",
        LeaseRules.invalidClaim(new WorkItem.Claim("w\n1", Duration.ofSeconds(5), 3, 0, null), max)
            .orElseThrow()
            .field());
    assertEquals(
        "lease",
        LeaseRules.invalidClaim(new WorkItem.Claim(W1, Duration.ofHours(2), 3, 0, null), max)
            .orElseThrow()
            .field());
    assertEquals("lease", LeaseRules.invalidLease(Duration.ZERO, max).orElseThrow().field());
    assertEquals(
        "maxAttempts",
        LeaseRules.invalidClaim(new WorkItem.Claim(W1, Duration.ofSeconds(5), 1001, 0, null), max)
            .orElseThrow()
            .field());
    assertEquals(
        Optional.empty(),
        LeaseRules.invalidClaim(new WorkItem.Claim(W1, Duration.ofSeconds(5), 3, 0, null), max));
  }
}

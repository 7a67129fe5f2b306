package io.fencekeeper.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.KeepApart;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The pool's side of "Lost together, kept apart" (docs/design.md), without actors. */
class CohortGateTest {

  static final String A = "pekko://fencekeeper@10.0.0.1:25520";
  static final String B = "pekko://fencekeeper@10.0.0.2:25520";

  @Test
  void aFirstClaimTakesNoItemOfAnyCohortSoItNeverWaitsForATurn() {
    assertEquals(KeepApart.ANY_COHORT, CohortGate.forPool().firstClaim());
    assertEquals(KeepApart.NOTHING, CohortGate.NONE.firstClaim(), "outside a pool: nothing");
    assertFalse(CohortGate.NONE.keeps());
  }

  @Test
  void oneClaimAtATimeMayJoinACohortAndTheNextKeepsApartFromWhatItJoined() {
    CohortGate gate = CohortGate.forPool();
    CompletableFuture<KeepApart> first = gate.turn().toCompletableFuture();
    CompletableFuture<KeepApart> second = gate.turn().toCompletableFuture();
    assertEquals(KeepApart.NOTHING, first.getNow(null), "nothing in flight yet");
    assertFalse(second.isDone(), "the turn is the first claim's until it is answered");

    gate.turnEnded(Set.of(A)); // the first claim was granted an item of A's cohort
    assertEquals(new KeepApart(false, Set.of(A)), second.getNow(null));
    assertEquals(Set.of(A), gate.inFlight());

    gate.turnEnded(Set.of()); // the second was kept apart: nothing joined
    assertEquals(new KeepApart(false, Set.of(A)), gate.turn().toCompletableFuture().getNow(null));
    gate.turnEnded(Set.of(B));
    gate.left(Set.of(A)); // the first attempt ended
    assertEquals(Set.of(B), gate.inFlight());
    gate.left(Set.of(B));
    assertTrue(gate.inFlight().isEmpty());
  }

  @Test
  void aCohortCountsUntilTheLastOfItsAttemptsHereEnds() {
    CohortGate gate = CohortGate.forPool();
    gate.joined(Set.of(A)); // granted outside a turn (an item of an older node's answer)
    gate.turn();
    gate.turnEnded(Set.of(A, B));
    gate.left(Set.of(A));
    assertEquals(Set.of(A, B), gate.inFlight(), "one of A's two attempts still runs");
    gate.left(Set.of(A, B));
    assertTrue(gate.inFlight().isEmpty());
  }
}

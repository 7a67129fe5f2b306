package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Every row of the one rule for how a run ends: only DONE items count. */
class RunOutcomeTest {

  @Test
  void aCancelledRunIsCancelledWhateverItsItemsDid() {
    assertEquals(RunState.CANCELLED, RunOutcome.finalState(10, 10, 0, 0, true));
    assertEquals(RunState.CANCELLED, RunOutcome.finalState(10, 0, 10, 0, true));
    assertEquals(RunState.CANCELLED, RunOutcome.finalState(10, 4, 1, 5, true));
  }

  @Test
  void everyItemDoneSucceeds() {
    assertEquals(RunState.SUCCEEDED, RunOutcome.finalState(10, 10, 0, 0, false));
  }

  @Test
  void anEmptyRunSucceeds() {
    assertEquals(RunState.SUCCEEDED, RunOutcome.finalState(0, 0, 0, 0, false));
  }

  @Test
  void noItemDoneFails() {
    assertEquals(RunState.FAILED, RunOutcome.finalState(10, 0, 0, 5, false), "all closed");
    assertEquals(RunState.FAILED, RunOutcome.finalState(10, 0, 2, 5, false), "within the limit");
  }

  @Test
  void moreFailedThanMaxFailedItemsFails() {
    assertEquals(RunState.FAILED, RunOutcome.finalState(10, 7, 3, 2, false));
  }

  @Test
  void exactlyMaxFailedItemsIsPartialNotFailed() {
    assertEquals(RunState.PARTIAL, RunOutcome.finalState(10, 8, 2, 2, false));
  }

  @Test
  void someDoneWithinTheFailureLimitIsPartial() {
    assertEquals(RunState.PARTIAL, RunOutcome.finalState(10, 9, 0, 0, false), "one item closed");
    assertEquals(RunState.PARTIAL, RunOutcome.finalState(10, 5, 1, 3, false), "failed and closed");
  }

  @Test
  void noFailuresAllowedMeansOneFailureFailsTheRun() {
    assertEquals(RunState.FAILED, RunOutcome.finalState(10, 9, 1, 0, false));
  }
}

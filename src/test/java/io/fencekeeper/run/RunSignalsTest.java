package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.item.WorkItem;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What each journaled item event adds to its run's counters (docs/design.md, "Observability"). The
 * attempt counter relies on every claim ending in exactly one counted way, so a run's ended
 * attempts equal its claims once it has ended.
 */
class RunSignalsTest {

  static final Instant T = Instant.parse("2026-11-30T01:00:00Z");

  @Test
  void aFirstClaimAndACleanCompletionCountNothing() {
    assertEquals(RunSignals.NONE, RunSignals.of(granted(null)));
    assertEquals(RunSignals.NONE, RunSignals.of(new WorkItem.ItemCompleted(1, null, false, 0, T)));
  }

  @Test
  void aTakeoverCountsATakeoverAndTheEndOfThePreviousAttempt() {
    assertEquals(
        new RunSignals(
            0,
            1,
            0,
            0,
            1,
            0,
            Map.of("pekko://fencekeeper@10.0.0.3:25520", new RunSignals.NodeTakeovers(1, T, T))),
        RunSignals.of(granted("pekko://fencekeeper@10.0.0.3:25520/w17")));
  }

  @Test
  void takeoversAddUpByNodeWithTheFirstAndTheLast() {
    String a = "pekko://fencekeeper@10.0.0.3:25520";
    RunSignals sum =
        RunSignals.of(granted(a + "/w1", T.plusSeconds(5)))
            .plus(RunSignals.of(granted(a + "/w2", T.plusSeconds(2))))
            .plus(RunSignals.of(granted("external-worker", T.plusSeconds(9))));
    assertEquals(3, sum.takeovers());
    assertEquals(
        Map.of(
            a,
            new RunSignals.NodeTakeovers(2, T.plusSeconds(2), T.plusSeconds(5)),
            "external-worker",
            new RunSignals.NodeTakeovers(1, T.plusSeconds(9), T.plusSeconds(9))),
        sum.takeoversByNode());
  }

  @Test
  void completionsCountReconciliationsAndThrottledAnswers() {
    assertEquals(
        new RunSignals(0, 0, 1, 3, 0, 0),
        RunSignals.of(new WorkItem.ItemCompleted(2, null, true, 3, T)));
    assertEquals(
        new RunSignals(0, 0, 1, 0, 0, 0),
        RunSignals.of(new WorkItem.EffectRecorded(2, null, true, T)));
  }

  @Test
  void everyOtherWayAnAttemptEndsCountsOnce() {
    assertEquals(
        new RunSignals(0, 0, 0, 2, 1, 0),
        RunSignals.of(new WorkItem.AttemptFailed(1, "503", true, false, null, 2, T)));
    assertEquals(new RunSignals(0, 0, 0, 0, 1, 0), RunSignals.of(new WorkItem.LeaseReleased(1, T)));
    assertEquals(
        new RunSignals(0, 0, 0, 0, 1, 0),
        RunSignals.of(new WorkItem.ItemClosed(2, "deadline", "w-1", T)));
    assertEquals(
        RunSignals.NONE,
        RunSignals.of(new WorkItem.ItemClosed(2, "deadline", null, T)),
        "closing an item nobody held ends no attempt");
  }

  @Test
  void aQuarantineCountsOnceAndEndsALapsedLeaseIfThereWasOne() {
    assertEquals(
        new RunSignals(0, 0, 0, 0, 1, 1),
        RunSignals.of(
            new WorkItem.ItemQuarantined(3, "holder lost", List.of("w-1", "w-2"), "w-2", T)));
    assertEquals(
        new RunSignals(0, 0, 0, 0, 0, 1),
        RunSignals.of(new WorkItem.ItemQuarantined(3, "holder lost", List.of("w-1"), null, T)));
    assertEquals(
        new RunSignals(0, 0, 0, 0, 1, 0),
        RunSignals.of(new WorkItem.AttemptsExhausted(4, "used up", List.of("w-3"), "w-3", T)));
  }

  @Test
  void aStaleCommandCountsAStaleRejection() {
    assertEquals(
        new RunSignals(1, 0, 0, 0, 0, 0),
        RunSignals.of(
            new WorkItem.StaleCommandRejected("Complete", "w-1", 1, 2, "stale token", T)));
  }

  static WorkItem.LeaseGranted granted(String previousOwner) {
    return granted(previousOwner, T);
  }

  static WorkItem.LeaseGranted granted(String previousOwner, Instant at) {
    return new WorkItem.LeaseGranted("w-2", 2, 2, 5, at.plusSeconds(30), previousOwner, 0, at);
  }
}

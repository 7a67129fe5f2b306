package io.fencekeeper.run.governor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.governor.GovernorPolicy.Decision;
import io.fencekeeper.run.governor.GovernorPolicy.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The governor of one run between decisions: it decides at most once a second on what was gathered
 * since the last decision, keeps a short log of the changes an operator reads, and takes new limits
 * at once.
 */
class RunGovernorTest {

  static final Instant T = Instant.parse("2026-11-30T02:00:00Z");
  static final Instant DEADLINE = T.plus(Duration.ofHours(4));

  /** Normal 16, burst 64, min 2, halving, a one-second cool-down, an alert at 3 stale. */
  static final GovernorSettings SETTINGS = GovernorSettings.defaults().withCaps(16, 64, 2);

  static GovernorSettings withCooldown(Duration cooldown) {
    return new GovernorSettings(16, 64, 2, 0.5, cooldown, 0.9, 3);
  }

  /** 1,000 items at 100/s: ten seconds of a four-hour window. */
  static Optional<Decision> healthy(RunGovernor governor, Instant now) {
    return governor.decide(now, DEADLINE, 1_000, 100, 0.5);
  }

  /** 100,000 items at 9/s need three hours of a three-hour window: the policy wants to burst. */
  static Optional<Decision> deadlineAtRisk(RunGovernor governor, Instant now) {
    return governor.decide(now, now.plus(Duration.ofHours(3)), 100_000, 9, 60);
  }

  @Test
  void startsAtTheNormalCapAndRecordsTheStart() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);

    assertEquals(16, governor.cap());
    GovernorView view = governor.view();
    assertEquals(Mode.NORMAL, view.mode());
    assertEquals(1, view.changes().size());
    assertEquals(T, view.changes().get(0).at());
  }

  @Test
  void decidesAtMostOnceASecondAndKeepsWhatItGatheredMeanwhile() {
    // no cool-down: only the pacing can hold the cap within the second
    RunGovernor governor = new RunGovernor(withCooldown(Duration.ZERO), T);
    governor.throttled(4);
    assertTrue(healthy(governor, T).isPresent());
    assertEquals(8, governor.cap());

    governor.throttled(4);
    assertEquals(Optional.empty(), healthy(governor, T.plusMillis(999)));
    assertEquals(8, governor.cap(), "no decision within the second");

    healthy(governor, T.plusSeconds(1));

    assertEquals(4, governor.cap(), "the throttles of the skipped call count at the next decision");
  }

  @Test
  void signalsCountOnlyForTheDecisionThatFollowsThem() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.throttled(1);
    healthy(governor, T);
    assertEquals(8, governor.cap());

    healthy(governor, T.plusSeconds(1));

    assertEquals(Mode.NORMAL, governor.decision().mode());
    assertEquals(9, governor.cap(), "healthy again: one additive step up");
  }

  /**
   * The governor bursts again a second after the last 429 when the deadline is at risk; for the
   * fleet the run stays throttled for a minute, so an autoscaler never adds nodes in a lull between
   * two bursts of 429s.
   */
  @Test
  void aThrottledAnswerKeepsTheRunThrottledForTheFleetForAMinuteWhileTheGovernorBurstsAgain() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    assertFalse(governor.throttledLately(T), "never throttled");
    governor.throttled(2);
    deadlineAtRisk(governor, T);
    assertEquals(Mode.THROTTLED, governor.decision().mode());

    deadlineAtRisk(governor, T.plusSeconds(2));
    assertEquals(Mode.BURST, governor.decision().mode(), "the governor bursts again");
    assertTrue(governor.throttledLately(T.plusSeconds(2)));
    assertTrue(governor.throttledLately(T.plus(RunGovernor.FLEET_THROTTLED_FOR).minusMillis(1)));
    assertFalse(
        governor.throttledLately(T.plus(RunGovernor.FLEET_THROTTLED_FOR)), "a minute without");
  }

  @Test
  void throttledSignalHalvesTheCapOncePerCoolDown() {
    RunGovernor governor = new RunGovernor(withCooldown(Duration.ofSeconds(5)), T);

    governor.throttled(3);
    Optional<Decision> first = healthy(governor, T);
    assertEquals(Mode.THROTTLED, first.orElseThrow().mode());
    assertEquals(8, governor.cap());

    governor.throttled(3);
    assertEquals(
        Optional.empty(), healthy(governor, T.plusSeconds(2)), "cooling down: nothing to log");
    assertEquals(8, governor.cap(), "one decrease per cool-down");
    assertEquals(Mode.THROTTLED, governor.decision().mode());

    governor.throttled(3);
    Optional<Decision> afterCooldown = healthy(governor, T.plusSeconds(5));

    assertEquals(4, afterCooldown.orElseThrow().cap());
    assertEquals(4, governor.cap());
  }

  @Test
  void throttlingNeverTakesTheCapBelowTheMinimum() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    for (int s = 0; s < 10; s++) {
      governor.throttled(1);
      healthy(governor, T.plusSeconds(s));
    }

    assertEquals(SETTINGS.minCap(), governor.cap());
  }

  @Test
  void staleSignalsRaiseAlertStaleAndNeverAddCapacity() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.throttled(1);
    healthy(governor, T);
    assertEquals(8, governor.cap());

    for (int s = 1; s <= 5; s++) {
      for (int i = 0; i < 3; i++) {
        governor.stale(1);
      }
      Optional<Decision> d = deadlineAtRisk(governor, T.plusSeconds(s));
      assertEquals(Mode.ALERT_STALE, governor.decision().mode());
      assertEquals(8, governor.cap(), "a run whose leases expire gets no more workers");
      if (s == 1) {
        assertEquals(Mode.ALERT_STALE, d.orElseThrow().mode(), "the alert is worth logging");
      } else {
        assertEquals(Optional.empty(), d, "an alert that holds is logged once");
      }
    }
  }

  @Test
  void staleSignalsDuringABurstBringTheCapBackToNormal() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    deadlineAtRisk(governor, T);
    assertEquals(Mode.BURST, governor.decision().mode());
    assertEquals(32, governor.cap());

    for (int i = 0; i < 3; i++) {
      governor.stale(1);
    }
    deadlineAtRisk(governor, T.plusSeconds(1));

    assertEquals(Mode.ALERT_STALE, governor.decision().mode());
    assertEquals(16, governor.cap());
  }

  @Test
  void fewerStaleSignalsThanTheThresholdRaiseNoAlert() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.stale(1);
    governor.stale(1);

    healthy(governor, T);

    assertEquals(Mode.NORMAL, governor.decision().mode());
  }

  @Test
  void theViewRecordsModeChangesAndCapMovesOutsideNormalButNotTheStepsBackToNormal() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.throttled(1);
    healthy(governor, T.plusSeconds(1)); // NORMAL 16 -> THROTTLED 8: logged
    governor.throttled(1);
    healthy(governor, T.plusSeconds(2)); // THROTTLED 8 -> 4: logged
    healthy(governor, T.plusSeconds(3)); // THROTTLED -> NORMAL 5: logged
    healthy(governor, T.plusSeconds(4)); // NORMAL 5 -> 6: not logged
    healthy(governor, T.plusSeconds(5)); // NORMAL 6 -> 7: not logged

    List<GovernorView.Change> changes = governor.view().changes();

    assertEquals(
        List.of(T, T.plusSeconds(1), T.plusSeconds(2), T.plusSeconds(3)),
        changes.stream().map(GovernorView.Change::at).toList());
    assertEquals(List.of(16, 8, 4, 5), changes.stream().map(GovernorView.Change::cap).toList());
    assertEquals(
        List.of(Mode.NORMAL, Mode.THROTTLED, Mode.THROTTLED, Mode.NORMAL),
        changes.stream().map(GovernorView.Change::mode).toList());
    assertEquals(7, governor.view().cap(), "the view shows the cap in force");
  }

  @Test
  void theViewKeepsTheLastFiftyChangesNewestLast() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    // every second a change of mode: throttled, then healthy again
    for (int s = 1; s <= 70; s++) {
      if (s % 2 == 1) {
        governor.throttled(1);
      }
      healthy(governor, T.plusSeconds(s));
    }

    List<GovernorView.Change> changes = governor.view().changes();

    assertEquals(50, changes.size());
    assertEquals(T.plusSeconds(21), changes.get(0).at(), "the oldest are dropped");
    GovernorView.Change newest = changes.get(changes.size() - 1);
    assertEquals(T.plusSeconds(70), newest.at());
    assertEquals(governor.decision().mode(), newest.mode());
    assertEquals(governor.cap(), newest.cap());
    for (int i = 1; i < changes.size(); i++) {
      assertTrue(changes.get(i - 1).at().isBefore(changes.get(i).at()), "oldest first");
    }
  }

  @Test
  void theViewIsACopy() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    GovernorView before = governor.view();

    governor.throttled(1);
    healthy(governor, T);

    assertEquals(1, before.changes().size());
    assertEquals(16, before.cap());
  }

  @Test
  void changeClampsTheCapIntoTheNewLimitsAtOnce() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    deadlineAtRisk(governor, T);
    assertEquals(32, governor.cap());

    Decision lowered = governor.change(SETTINGS.withCaps(4, 8, 2), T.plusMillis(10));

    assertEquals(8, lowered.cap(), "the burst cap is the ceiling");
    assertEquals(8, governor.cap());
    GovernorView.Change recorded =
        governor.view().changes().get(governor.view().changes().size() - 1);
    assertEquals(T.plusMillis(10), recorded.at());
    assertEquals(8, recorded.cap());
    assertTrue(recorded.reason().contains("normal 4, burst 8, min 2"), recorded.reason());
  }

  @Test
  void changeRaisesTheCapToANewMinimum() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    for (int s = 0; s < 5; s++) {
      governor.throttled(1);
      healthy(governor, T.plusSeconds(s));
    }
    assertEquals(2, governor.cap());

    governor.change(SETTINGS.withCaps(16, 64, 10), T.plusSeconds(5));

    assertEquals(10, governor.cap());
    assertEquals(Mode.THROTTLED, governor.decision().mode(), "the mode is the policy's to change");
  }

  @Test
  void decisionsAfterAChangeFollowTheNewLimits() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.change(SETTINGS.withCaps(4, 8, 2), T);
    assertEquals(8, governor.cap());

    for (int s = 1; s <= 10; s++) {
      healthy(governor, T.plusSeconds(s));
    }

    assertEquals(4, governor.cap(), "back to the new normal cap");
    for (int s = 11; s <= 20; s++) {
      deadlineAtRisk(governor, T.plusSeconds(s));
      assertFalse(governor.cap() > 8, "never above the new burst cap: " + governor.cap());
    }
    assertEquals(8, governor.cap());
  }

  @Test
  void aQuarantineHoldsCapacityForAMinuteThenTheCapGrowsAgain() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.quarantined(T);
    for (int s = 0; s < 60; s++) {
      deadlineAtRisk(governor, T.plusSeconds(s));
      assertEquals(Mode.ALERT_QUARANTINE, governor.decision().mode(), "second " + s);
      assertEquals(16, governor.cap(), "no burst while items are being quarantined");
    }
    deadlineAtRisk(governor, T.plusSeconds(61));
    assertEquals(Mode.BURST, governor.decision().mode());
    assertTrue(
        governor.view().changes().stream().anyMatch(c -> c.mode() == Mode.ALERT_QUARANTINE),
        "the alert is in the run view's changes");
  }
}

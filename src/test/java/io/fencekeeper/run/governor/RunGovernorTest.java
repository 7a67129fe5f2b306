package io.fencekeeper.run.governor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.budget.ThrottleShare;
import io.fencekeeper.run.governor.GovernorPolicy.Decision;
import io.fencekeeper.run.governor.GovernorPolicy.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Random;
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

  /** Half of 20 calls throttled: the provider limits the run, the cap halves. */
  static final ThrottleShare.Calls LIMITING = new ThrottleShare.Calls(20, 10, 0);

  /** Twenty calls, none throttled. */
  static final ThrottleShare.Calls CLEAN = new ThrottleShare.Calls(20, 0, 0);

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
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.called(new ThrottleShare.Calls(40, 3, 0));
    assertTrue(healthy(governor, T).isEmpty(), "three 429s: too few to tell, nothing changes");

    governor.called(new ThrottleShare.Calls(40, 3, 0));
    assertEquals(Optional.empty(), healthy(governor, T.plusMillis(999)));
    assertEquals(16, governor.cap(), "no decision within the second");

    healthy(governor, T.plusSeconds(1));

    assertEquals(14, governor.cap(), "the calls of the skipped call count at the next decision");
  }

  @Test
  void theCallsThatCausedADecreaseDoNotCountAgainNorThoseReportedInTheSecondAfterIt() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.called(LIMITING);
    healthy(governor, T);
    assertEquals(8, governor.cap());
    // reported in the second after the decrease: made partly before it
    governor.called(LIMITING);
    healthy(governor, T.plusSeconds(1));
    assertEquals(8, governor.cap(), "not decreased again for them");

    governor.called(CLEAN);
    healthy(governor, T.plusSeconds(4));
    assertEquals(Mode.THROTTLED, governor.decision().mode(), "a window to read the decrease");
    assertEquals(8, governor.cap());

    governor.called(CLEAN);
    healthy(governor, T.plusSeconds(5));

    assertEquals(Mode.NORMAL, governor.decision().mode());
    assertEquals(9, governor.cap(), "what the decrease did was read: one step up");
  }

  @Test
  void throttledCallsAddUpOverTheWindow() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    // 3 of 40 is 7.5 %, but three 429s are too few to tell a limit from noise
    governor.called(new ThrottleShare.Calls(40, 3, 0));
    healthy(governor, T);
    assertEquals(16, governor.cap());

    governor.called(new ThrottleShare.Calls(40, 3, 0));
    healthy(governor, T.plusSeconds(1));

    assertEquals(Mode.THROTTLED, governor.decision().mode(), "6 of 80 in the window: a limit");
    assertEquals(14, governor.cap(), "to the 92.5 % the provider accepted");
  }

  @Test
  void throttledCallsLeaveTheWindowAfterFiveSeconds() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.called(new ThrottleShare.Calls(40, 3, 0));
    healthy(governor, T);

    governor.called(new ThrottleShare.Calls(40, 3, 0));
    healthy(governor, T.plusSeconds(5));

    assertEquals(Mode.NORMAL, governor.decision().mode(), "the first second's 429s are gone");
    assertEquals(16, governor.cap());
  }

  /**
   * The governor bursts again a second after the provider stopped limiting it when the deadline is
   * at risk; for the fleet the run stays throttled for a minute, so an autoscaler never adds nodes
   * in a lull between two bursts of 429s.
   */
  @Test
  void aThrottledDecisionKeepsTheRunThrottledForTheFleetForAMinuteWhileTheGovernorBurstsAgain() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    assertFalse(governor.throttledLately(T), "never throttled");
    governor.called(LIMITING);
    deadlineAtRisk(governor, T);
    assertEquals(Mode.THROTTLED, governor.decision().mode());

    deadlineAtRisk(governor, T.plusSeconds(5));
    assertEquals(Mode.BURST, governor.decision().mode(), "the governor bursts again");
    assertTrue(governor.throttledLately(T.plusSeconds(5)));
    assertTrue(governor.throttledLately(T.plus(RunGovernor.FLEET_THROTTLED_FOR).minusMillis(1)));
    assertFalse(
        governor.throttledLately(T.plus(RunGovernor.FLEET_THROTTLED_FOR)), "a minute without");
  }

  @Test
  void aLimitingShareHalvesTheCapOncePerCoolDown() {
    RunGovernor governor = new RunGovernor(withCooldown(Duration.ofSeconds(5)), T);

    governor.called(LIMITING);
    Optional<Decision> first = healthy(governor, T);
    assertEquals(Mode.THROTTLED, first.orElseThrow().mode());
    assertEquals(8, governor.cap());

    governor.called(LIMITING);
    assertEquals(
        Optional.empty(), healthy(governor, T.plusSeconds(2)), "cooling down: nothing to log");
    assertEquals(8, governor.cap(), "one decrease per cool-down");
    assertEquals(Mode.THROTTLED, governor.decision().mode());

    governor.called(LIMITING);
    Optional<Decision> afterCooldown = healthy(governor, T.plusSeconds(5));

    assertEquals(4, afterCooldown.orElseThrow().cap());
    assertEquals(4, governor.cap());
  }

  @Test
  void throttlingNeverTakesTheCapBelowTheMinimum() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    for (int s = 0; s < 10; s++) {
      governor.called(LIMITING);
      healthy(governor, T.plusSeconds(s));
    }

    assertEquals(SETTINGS.minCap(), governor.cap());
  }

  // --- throttling over time: a model provider, second by second ----------------------------------

  /**
   * What a run's calls met over {@code seconds}: each item in flight makes {@code callsPerItem}
   * calls a second; the provider refuses what is beyond its rate that second, and a share {@code
   * noise} of the rest at random. The calls made under one cap are reported before the next
   * decision, as the nodes report them.
   */
  static final class Life {
    final RunGovernor governor;
    final Random random = new Random(7);
    Instant now = T;
    long offered;
    long throttled;
    long accepted;
    int seconds;
    int minCap = Integer.MAX_VALUE;
    int throttledSeconds;
    int fleetThrottledSeconds;

    Life(GovernorSettings settings) {
      governor = new RunGovernor(settings, T);
    }

    Life live(int forSeconds, double callsPerItem, int rate, double noise) {
      for (int s = 0; s < forSeconds; s++) {
        long calls = Math.round(governor.cap() * callsPerItem);
        long beyond = rate > 0 ? Math.max(0, calls - rate) : 0;
        long noisy = 0;
        for (long c = 0; c < calls - beyond; c++) {
          noisy += random.nextDouble() < noise ? 1 : 0;
        }
        // a token bucket asks to wait until its next token; noise, a tenth of a second
        long retryAfter = beyond > 0 ? 1000 / rate : noisy > 0 ? 100 : 0;
        governor.called(new ThrottleShare.Calls(calls, beyond + noisy, retryAfter));
        offered += calls;
        throttled += beyond + noisy;
        accepted += calls - beyond - noisy;
        now = now.plusSeconds(1);
        seconds++;
        healthy(governor, now);
        minCap = Math.min(minCap, governor.cap());
        throttledSeconds += governor.decision().mode() == Mode.THROTTLED ? 1 : 0;
        fleetThrottledSeconds += governor.throttledLately(now) ? 1 : 0;
      }
      return this;
    }

    /** Forgets the figures so far (a settling period), not the governor's state. */
    Life measureFromHere() {
      offered = throttled = accepted = 0;
      seconds = throttledSeconds = fleetThrottledSeconds = 0;
      minCap = Integer.MAX_VALUE;
      return this;
    }

    double acceptedPerSecond() {
      return accepted / (double) seconds;
    }

    double throttledShare() {
      return offered == 0 ? 0 : throttled / (double) offered;
    }

    @Override
    public String toString() {
      return String.format(
          "%d s: %.1f accepted calls/s, %.2f %% of %d calls throttled, cap now %d (least %d),"
              + " THROTTLED %d s, for the fleet %d s",
          seconds,
          acceptedPerSecond(),
          100 * throttledShare(),
          offered,
          governor.cap(),
          minCap,
          throttledSeconds,
          fleetThrottledSeconds);
    }
  }

  @Test
  void noiseOfOnePercentNeverCollapsesTheCapNorHoldsTheFleetThrottled() {
    // few calls (8/s), the most noise can pass for a limit (24/s: 120 calls in the window, where
    // six 429s are just over 5 %), and many (160/s); ten minutes each
    for (double callsPerItem : new double[] {0.5, 1.5, 10}) {
      Life life = new Life(SETTINGS).live(600, callsPerItem, 0, 0.01);
      System.out.printf("1 %% noise at %.1f calls per item a second: %s%n", callsPerItem, life);
      // the old rule (any 429 halves the cap) held it at the minimum of 2
      assertTrue(life.minCap >= 13, "never more than a small cut: " + life);
      assertEquals(16, life.governor.cap(), life.toString());
      assertTrue(life.throttledSeconds <= 6, "THROTTLED at most 1 % of the time: " + life);
      assertTrue(
          life.fleetThrottledSeconds <= 120, "the fleet is not held THROTTLED for good: " + life);
    }
  }

  @Test
  void aRunSettlesNearAProvidersRateWithFewThrottledCalls() {
    // the provider takes 100 calls a second; each item in flight makes 4: 25 items fill it
    Life life = new Life(SETTINGS.withCaps(64, 64, 1)).live(60, 4, 100, 0).measureFromHere();

    life.live(300, 4, 100, 0);

    System.out.printf("a provider of 100 calls/s: %s%n", life);
    assertTrue(life.acceptedPerSecond() >= 80, "at least 0.8 of the provider's rate: " + life);
    assertTrue(life.throttledShare() <= 0.05, "at most 5 % of the calls throttled: " + life);
  }

  @Test
  void aRateThatDropsCutsConcurrencyWithinSecondsThenSettlesAgain() {
    Life life = new Life(SETTINGS.withCaps(64, 64, 1)).live(60, 4, 100, 0);
    int before = life.governor.cap();

    life.live(3, 4, 20, 0);

    // 20 calls a second are 5 items in flight
    assertTrue(
        life.governor.cap() <= 10, "from " + before + " to " + life.governor.cap() + " in 3 s");
    life.live(30, 4, 20, 0).measureFromHere().live(300, 4, 20, 0);
    System.out.printf("the rate drops from 100 to 20 calls/s: %s%n", life);
    assertTrue(life.acceptedPerSecond() >= 16, "at least 0.8 of the new rate: " + life);
    // 5 items fill the new rate: each step up that probes it is 20 % over, not 4 % as at 100/s,
    // so it is probed less and less often
    assertTrue(life.throttledShare() <= 0.05, "at most 5 % of the calls throttled: " + life);
  }

  @Test
  void staleSignalsRaiseAlertStaleAndNeverAddCapacity() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    governor.called(LIMITING);
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
    governor.called(LIMITING);
    healthy(governor, T.plusSeconds(1)); // NORMAL 16 -> THROTTLED 8: logged
    governor.called(LIMITING);
    healthy(governor, T.plusSeconds(2)); // the second after it: THROTTLED 8, not logged
    governor.called(LIMITING);
    healthy(governor, T.plusSeconds(3)); // THROTTLED 8 -> 4: logged
    healthy(governor, T.plusSeconds(4)); // THROTTLED 4, a window after the decrease: not logged
    governor.called(CLEAN);
    healthy(governor, T.plusSeconds(8)); // THROTTLED -> NORMAL 5: logged
    governor.called(CLEAN);
    healthy(governor, T.plusSeconds(9)); // NORMAL 5, the second after the step: not logged
    governor.called(CLEAN);
    healthy(governor, T.plusSeconds(10)); // NORMAL 5 -> 6: not logged

    List<GovernorView.Change> changes = governor.view().changes();

    assertEquals(
        List.of(T, T.plusSeconds(1), T.plusSeconds(3), T.plusSeconds(8)),
        changes.stream().map(GovernorView.Change::at).toList());
    assertEquals(List.of(16, 8, 4, 5), changes.stream().map(GovernorView.Change::cap).toList());
    assertEquals(
        List.of(Mode.NORMAL, Mode.THROTTLED, Mode.THROTTLED, Mode.NORMAL),
        changes.stream().map(GovernorView.Change::mode).toList());
    assertEquals(6, governor.view().cap(), "the view shows the cap in force");
  }

  @Test
  void theViewKeepsTheLastFiftyChangesNewestLast() {
    RunGovernor governor = new RunGovernor(SETTINGS, T);
    // a change of mode every few seconds: throttled, then healthy again a window later
    for (int cycle = 0; cycle < 35; cycle++) {
      governor.called(LIMITING);
      healthy(governor, T.plusSeconds(10L * cycle + 1));
      healthy(governor, T.plusSeconds(10L * cycle + 6));
    }

    List<GovernorView.Change> changes = governor.view().changes();

    // the start and 70 changes, two a cycle: the start and the first ten cycles' are dropped
    assertEquals(50, changes.size());
    assertEquals(T.plusSeconds(10L * 10 + 1), changes.get(0).at(), "the oldest are dropped");
    GovernorView.Change newest = changes.get(changes.size() - 1);
    assertEquals(T.plusSeconds(10L * 34 + 6), newest.at());
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

    governor.called(LIMITING);
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
      governor.called(LIMITING);
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

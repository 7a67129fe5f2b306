package io.fencekeeper.run.governor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.governor.FleetPolicy.Reason;
import io.fencekeeper.run.governor.FleetPolicy.RunLoad;
import io.fencekeeper.run.governor.FleetPolicy.Settings;
import io.fencekeeper.run.governor.FleetPolicy.Wanted;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the nodes-wanted signal asks for, and why. */
class FleetPolicyTest {

  private static final Instant NOW = Instant.parse("2026-12-04T02:00:00Z");
  private static final Settings FLEET = new Settings(1, 5, 16, 0.9);

  /** 6,000 items left, 100 s to go, 10 items/s with 16 in flight on one node. */
  private static RunLoad atRisk(int burstCap, int budget, boolean throttled) {
    return new RunLoad(
        "night/2026-12-03", NOW, NOW.plusSeconds(100), 6000, 10, 16, burstCap, budget, throttled);
  }

  @Test
  void aRunThatCannotMeetItsDeadlineAsksForTheNodesItsRateSays() {
    // 10/s over 16 in flight = 0.625/s per item in flight; 6,000 in 90 s = 66.7/s: 107 in flight
    Wanted wanted =
        FleetPolicy.wanted(new Settings(1, 10, 16, 0.9), List.of(atRisk(128, 0, false)));
    assertEquals(Reason.AT_RISK, wanted.reason());
    assertEquals(107, wanted.needs().get(0).inFlight());
    assertEquals(7, wanted.nodes(), "107 in flight at 16 workers a node");
  }

  @Test
  void moreNodesNeverBuyMoreThanTheProviderAllowsOrTheRunsBurstCap() {
    Wanted budget = FleetPolicy.wanted(FLEET, List.of(atRisk(128, 40, false)));
    assertEquals(Reason.AT_RISK, budget.reason(), "still at risk: the signal says so");
    assertEquals(40, budget.needs().get(0).inFlight());
    assertEquals(3, budget.nodes(), "40 calls at once fill 3 nodes of 16, no more");
    assertTrue(budget.needs().get(0).detail().contains("provider's budget"), budget.toString());

    Wanted burst = FleetPolicy.wanted(FLEET, List.of(atRisk(32, 0, false)));
    assertEquals(2, burst.nodes());
    assertTrue(burst.needs().get(0).detail().contains("burst cap"), burst.toString());
  }

  @Test
  void theMaximumBoundsTheFleetAndSaysSo() {
    Wanted wanted = FleetPolicy.wanted(FLEET, List.of(atRisk(128, 0, false)));
    assertEquals(5, wanted.nodes());
    assertTrue(wanted.detail().contains("maximum"), wanted.detail());
  }

  @Test
  void aThrottlingProviderNeverRaisesTheSignal() {
    Wanted wanted = FleetPolicy.wanted(FLEET, List.of(atRisk(128, 0, true)));
    assertEquals(Reason.THROTTLED, wanted.reason());
    assertEquals(16, wanted.needs().get(0).inFlight(), "what it has, not what its rate asks");
    assertEquals(1, wanted.nodes());
  }

  @Test
  void aRunOnTrackNeedsOnlyWhatFinishesInTime() {
    // 600 items, an hour left, 10/s with 16 in flight: 0.19/s needed, one item in flight would do
    RunLoad easy =
        new RunLoad("easy/2026-12-03", NOW, NOW.plusSeconds(3600), 600, 10, 16, 32, 0, false);
    Wanted wanted = FleetPolicy.wanted(new Settings(2, 5, 16, 0.9), List.of(easy));
    assertEquals(Reason.ON_TRACK, wanted.reason());
    assertEquals(1, wanted.needs().get(0).inFlight());
    assertEquals(2, wanted.nodes(), "never below the minimum");
  }

  @Test
  void runsInFlightTogetherAddTheirNeeds() {
    RunLoad a = atRisk(24, 0, false);
    RunLoad b = new RunLoad("b/2026-12-03", NOW, NOW.plusSeconds(100), 6000, 10, 16, 24, 0, false);
    Wanted wanted = FleetPolicy.wanted(FLEET, List.of(a, b));
    assertEquals(48, wanted.needs().stream().mapToLong(FleetPolicy.Need::inFlight).sum());
    assertEquals(3, wanted.nodes());
  }

  @Test
  void noRunOrOnlyEndedOnesReleaseDownToTheMinimum() {
    Settings fleet = new Settings(3, 9, 16, 0.9);
    assertEquals(
        new Wanted(3, Reason.IDLE, FleetPolicy.wanted(fleet, List.of()).detail(), List.of()),
        FleetPolicy.wanted(fleet, List.of()));
    RunLoad done = new RunLoad("d/2026-12-03", NOW, NOW.plusSeconds(60), 0, 0, 0, 32, 0, false);
    RunLoad late = new RunLoad("l/2026-12-03", NOW, NOW.minusSeconds(1), 500, 10, 16, 32, 0, false);
    Wanted wanted = FleetPolicy.wanted(fleet, List.of(done, late));
    assertEquals(Reason.IDLE, wanted.reason());
    assertEquals(3, wanted.nodes());
  }

  @Test
  void aRunWithoutACompletionYetHoldsWhatItHas() {
    RunLoad starting =
        new RunLoad("s/2026-12-03", NOW, NOW.plusSeconds(100), 6000, 0, 16, 128, 0, false);
    Wanted wanted = FleetPolicy.wanted(FLEET, List.of(starting));
    assertEquals(Reason.ON_TRACK, wanted.reason());
    assertEquals(16, wanted.needs().get(0).inFlight());
  }

  @Test
  void extremeFiguresNeitherOverflowNorLeaveTheBounds() {
    RunLoad huge =
        new RunLoad(
            "h/2026-12-03",
            NOW,
            Instant.MAX,
            Long.MAX_VALUE,
            Double.MIN_VALUE,
            Integer.MAX_VALUE,
            Integer.MAX_VALUE,
            0,
            false);
    Wanted wanted = FleetPolicy.wanted(FLEET, List.of(huge, huge));
    assertTrue(wanted.nodes() >= 1 && wanted.nodes() <= 5, wanted.toString());
    RunLoad slow =
        new RunLoad("s/2026-12-03", NOW, NOW.plusSeconds(1), Long.MAX_VALUE, 1e-9, 1, 64, 0, false);
    assertEquals(5, FleetPolicy.wanted(FLEET, List.of(slow, slow)).nodes());
  }

  @Test
  void boundsThatCannotHoldAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new Settings(0, 3, 16, 0.9));
    assertThrows(IllegalArgumentException.class, () -> new Settings(4, 3, 16, 0.9));
    assertThrows(IllegalArgumentException.class, () -> new Settings(1, 3, 0, 0.9));
    assertThrows(IllegalArgumentException.class, () -> new Settings(1, 3, 16, 0));
    assertThrows(IllegalArgumentException.class, () -> new Settings(1, 3, 16, Double.NaN));
  }
}

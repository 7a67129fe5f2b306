package io.fencekeeper.run.governor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.governor.GovernorPolicy.Decision;
import io.fencekeeper.run.governor.GovernorPolicy.Mode;
import io.fencekeeper.run.governor.GovernorPolicy.Signals;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** One test per row of the governor's decision table, and the AIMD shape. */
class GovernorPolicyTest {

  static final Instant NOW = Instant.parse("2026-11-30T02:00:00Z");
  static final Instant DEADLINE = NOW.plus(Duration.ofHours(4));
  static final GovernorSettings SETTINGS = GovernorSettings.defaults().withCaps(16, 64, 2);

  static Signals healthy() {
    // 1,000 items at 100/s: ten seconds of a four-hour window
    return new Signals(NOW, DEADLINE, 1000, 100, 0.5, 0, 0);
  }

  @Test
  void healthyBacklogKeepsTheNormalCap() {
    Decision d = GovernorPolicy.decide(SETTINGS, Decision.initial(SETTINGS), healthy());
    assertEquals(Mode.NORMAL, d.mode());
    assertEquals(16, d.cap());
  }

  @Test
  void deadlineAtRiskAddsBoundedBurstCapacity() {
    // 100,000 items at 10/s need 2.8 h of a 3 h window: past the 90 % margin
    Signals atRisk = new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, 0, 0);
    Decision d = Decision.initial(SETTINGS);
    for (int i = 0; i < 100; i++) {
      d = GovernorPolicy.decide(SETTINGS, d, atRisk);
      assertEquals(Mode.BURST, d.mode());
      assertTrue(d.cap() <= SETTINGS.burstCap(), "burst is bounded: " + d.cap());
    }
    assertEquals(SETTINGS.burstCap(), d.cap());
  }

  @Test
  void burstHoldsWhileTheNormalCapWouldMissTheDeadlineAndStepsDownWhenNot() {
    Decision burst = new Decision(Mode.BURST, 64, "burst", null);
    // at 64 in flight 60 items/s finish 100,000 in 28 min of a 60 min window; at 16, 110 min
    Signals onTimeOnlyWithBurst =
        new Signals(NOW, NOW.plus(Duration.ofHours(1)), 100_000, 60, 1, 0, 0);
    Decision held = GovernorPolicy.decide(SETTINGS, burst, onTimeOnlyWithBurst);
    assertEquals(Mode.BURST, held.mode());
    assertEquals(64, held.cap());
    // plenty of time even at the normal cap: step down gradually, not off a cliff
    Decision down = GovernorPolicy.decide(SETTINGS, burst, healthy());
    assertEquals(Mode.NORMAL, down.mode());
    assertEquals(40, down.cap());
  }

  @Test
  void throttlingHalvesTheCapOncePerCooldownAndNeverBelowTheMinimum() {
    Decision d = Decision.initial(SETTINGS);
    Signals throttled = new Signals(NOW, DEADLINE, 1000, 100, 0.5, 12, 0);
    d = GovernorPolicy.decide(SETTINGS, d, throttled);
    assertEquals(Mode.THROTTLED, d.mode());
    assertEquals(8, d.cap());
    // within the cool-down the cap holds: one burst of 429s is one decrease
    d = GovernorPolicy.decide(SETTINGS, d, throttled);
    assertEquals(8, d.cap());
    for (int i = 1; i <= 10; i++) {
      Signals later = new Signals(NOW.plusSeconds(2L * i), DEADLINE, 1000, 100, 0.5, 3, 0);
      d = GovernorPolicy.decide(SETTINGS, d, later);
    }
    assertEquals(SETTINGS.minCap(), d.cap());
  }

  @Test
  void afterThrottlingTheCapGrowsBackAdditivelyToNormal() {
    Decision d = new Decision(Mode.THROTTLED, 4, "throttled", NOW);
    for (int i = 1; i <= 12; i++) {
      Decision next = GovernorPolicy.decide(SETTINGS, d, healthy());
      assertEquals(Math.min(16, d.cap() + 1), next.cap(), "one more per decision");
      d = next;
    }
    assertEquals(Mode.NORMAL, d.mode());
    assertEquals(16, d.cap());
  }

  @Test
  void staleClaimsRaiseAnAlertAndNeverAddCapacity() {
    // even with the deadline at risk, stale claims mean the lease is wrong, not the capacity
    Signals staleAndLate = new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, 0, 5);
    Decision d = new Decision(Mode.BURST, 40, "burst", null);
    d = GovernorPolicy.decide(SETTINGS, d, staleAndLate);
    assertEquals(Mode.ALERT_STALE, d.mode());
    assertEquals(16, d.cap(), "back to no more than the normal cap");
    assertTrue(d.reason().contains("lease duration"), d.reason());
    Decision again = GovernorPolicy.decide(SETTINGS, d, staleAndLate);
    assertTrue(again.cap() <= d.cap());
  }

  @Test
  void quarantinedItemsRaiseAnAlertAndNeverAddCapacity() {
    // a poison item kills the holder it is handed to: a late run still gets no more workers
    Signals quarantinedAndLate =
        new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, 0, 5, 2);
    Decision d = new Decision(Mode.BURST, 40, "burst", null);
    d = GovernorPolicy.decide(SETTINGS, d, quarantinedAndLate);
    assertEquals(Mode.ALERT_QUARANTINE, d.mode(), "before the stale alert: it names the cause");
    assertEquals(16, d.cap(), "back to no more than the normal cap");
    assertTrue(d.reason().startsWith("2 items quarantined"), d.reason());
    assertTrue(d.reason().contains("inspect the provider adapter and the nodes' logs"), d.reason());
    Decision again = GovernorPolicy.decide(SETTINGS, d, quarantinedAndLate);
    assertTrue(again.cap() <= d.cap());
  }

  @Test
  void throttlingWinsOverEveryOtherSignal() {
    Signals everything = new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, 4, 9, 1);
    assertEquals(
        Mode.THROTTLED,
        GovernorPolicy.decide(SETTINGS, Decision.initial(SETTINGS), everything).mode());
  }

  @Test
  void nonsensicalCapsAreRefusedWithTheFieldNames() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> GovernorSettings.defaults().withCaps(8, 4, 1));
    assertTrue(e.getMessage().contains("burst"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> GovernorSettings.defaults().withCaps(8, 16, 0));
  }
}

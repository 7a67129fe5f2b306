package io.fencekeeper.run.governor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.budget.ThrottleShare;
import io.fencekeeper.provider.budget.ThrottleShare.Calls;
import io.fencekeeper.run.governor.GovernorPolicy.Decision;
import io.fencekeeper.run.governor.GovernorPolicy.Mode;
import io.fencekeeper.run.governor.GovernorPolicy.Signals;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * One test per row of the governor's decision table, and the AIMD shape; over time, against a model
 * provider, in {@link RunGovernorTest}.
 */
class GovernorPolicyTest {

  static final Instant NOW = Instant.parse("2026-11-30T02:00:00Z");
  static final Instant DEADLINE = NOW.plus(Duration.ofHours(4));
  static final GovernorSettings SETTINGS = GovernorSettings.defaults().withCaps(16, 64, 2);

  static Signals healthy() {
    // 1,000 items at 100/s: ten seconds of a four-hour window
    return new Signals(NOW, DEADLINE, 1000, 100, 0.5, Calls.NONE, 0);
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
    Signals atRisk = new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, Calls.NONE, 0);
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
        new Signals(NOW, NOW.plus(Duration.ofHours(1)), 100_000, 60, 1, Calls.NONE, 0);
    Decision held = GovernorPolicy.decide(SETTINGS, burst, onTimeOnlyWithBurst);
    assertEquals(Mode.BURST, held.mode());
    assertEquals(64, held.cap());
    // plenty of time even at the normal cap: step down gradually, not off a cliff
    Decision down = GovernorPolicy.decide(SETTINGS, burst, healthy());
    assertEquals(Mode.NORMAL, down.mode());
    assertEquals(40, down.cap());
  }

  /** Twenty of forty calls throttled: the provider limits the run. */
  static final Calls HALF_OF_40 = new Calls(40, 20, 0);

  static Signals healthyWith(Instant now, Calls calls) {
    return new Signals(now, DEADLINE, 1000, 100, 0.5, calls, 0);
  }

  @Test
  void aShareAboveFivePercentCutsToTheShareTheProviderAccepted() {
    // 48 of 480 throttled: the provider took 90 % of what the run offered
    Decision d =
        GovernorPolicy.decide(
            SETTINGS, Decision.initial(SETTINGS), healthyWith(NOW, new Calls(480, 48, 0)));
    assertEquals(Mode.THROTTLED, d.mode());
    assertEquals(14, d.cap(), "16 x 0.9, rounded down");
    assertTrue(d.reason().startsWith("10.0 % of 480 calls throttled (48)"), d.reason());
  }

  @Test
  void aShareOfMostCallsHalvesTheCapOncePerCooldownAndNeverBelowTheMinimum() {
    Decision d = Decision.initial(SETTINGS);
    Signals throttled = healthyWith(NOW, new Calls(100, 80, 0));
    d = GovernorPolicy.decide(SETTINGS, d, throttled);
    assertEquals(Mode.THROTTLED, d.mode());
    assertEquals(8, d.cap(), "by half at the most in one step, not to a fifth");
    // within the cool-down the cap holds: one burst of 429s is one decrease
    d = GovernorPolicy.decide(SETTINGS, d, throttled);
    assertEquals(8, d.cap());
    for (int i = 1; i <= 10; i++) {
      d = GovernorPolicy.decide(SETTINGS, d, healthyWith(NOW.plusSeconds(2L * i), HALF_OF_40));
    }
    assertEquals(SETTINGS.minCap(), d.cap());
  }

  @Test
  void fewerThrottledCallsThanTheMinimumNeverCutWhateverTheirShare() {
    // five of ten: a large share of a slow provider's few calls, and still maybe noise
    Decision d =
        GovernorPolicy.decide(
            SETTINGS, Decision.initial(SETTINGS), healthyWith(NOW, new Calls(10, 5, 0)));
    assertEquals(Mode.NORMAL, d.mode());
    assertEquals(16, d.cap());
  }

  @Test
  void noiseOfOnePercentIsClearAndTheCapGrows() {
    Decision d = new Decision(Mode.NORMAL, 10, "earlier", null);
    // 5 of 500 throttled, as a provider's noise of 1 % gives them
    d = GovernorPolicy.decide(SETTINGS, d, healthyWith(NOW, new Calls(500, 5, 100)));
    assertEquals(Mode.NORMAL, d.mode());
    assertEquals(11, d.cap(), "one step up");
  }

  @Test
  void someThrottlingBelowTheCutAddsNothingInAnyMode() {
    Calls some = new Calls(500, 15, 0); // 3 %
    Decision normal =
        GovernorPolicy.decide(
            SETTINGS, new Decision(Mode.NORMAL, 10, "earlier", null), healthyWith(NOW, some));
    assertEquals(Mode.NORMAL, normal.mode());
    assertEquals(10, normal.cap(), "no step up");
    Signals lateWithSome = new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, some, 0);
    Decision burst =
        GovernorPolicy.decide(SETTINGS, new Decision(Mode.BURST, 20, "burst", null), lateWithSome);
    assertEquals(Mode.BURST, burst.mode());
    assertEquals(20, burst.cap(), "no doubling into a provider that throttles");
    Decision throttled =
        GovernorPolicy.decide(
            SETTINGS, new Decision(Mode.THROTTLED, 10, "cut", null), healthyWith(NOW, some));
    assertEquals(Mode.THROTTLED, throttled.mode(), "THROTTLED until the share is clear");
    assertEquals(10, throttled.cap());
  }

  @Test
  void nothingGrowsForAWindowAfterADecreaseOrTheLongerRetryAfter() {
    Decision d =
        GovernorPolicy.decide(
            SETTINGS, Decision.initial(SETTINGS), healthyWith(NOW, new Calls(40, 20, 100)));
    assertEquals(8, d.cap());
    assertEquals(NOW.plus(ThrottleShare.WINDOW), d.waitUntil(), "a window to read the decrease");
    Decision waiting = GovernorPolicy.decide(SETTINGS, d, healthyWith(NOW.plusSeconds(4), null));
    assertEquals(Mode.THROTTLED, waiting.mode());
    assertEquals(8, waiting.cap());
    Decision after =
        GovernorPolicy.decide(SETTINGS, waiting, healthyWith(NOW.plusSeconds(5), CLEAN));
    assertEquals(Mode.NORMAL, after.mode());
    assertEquals(9, after.cap());

    Decision asked =
        GovernorPolicy.decide(
            SETTINGS, Decision.initial(SETTINGS), healthyWith(NOW, new Calls(40, 20, 8000)));
    assertEquals(NOW.plusSeconds(8), asked.waitUntil(), "the provider asked to wait longer");
    Decision longWait =
        GovernorPolicy.decide(
            SETTINGS, Decision.initial(SETTINGS), healthyWith(NOW, new Calls(40, 20, 3_600_000)));
    assertEquals(NOW.plusSeconds(10), longWait.waitUntil(), "a Retry-After holds 10 s at most");
  }

  /** A hundred calls, none throttled. */
  static final Calls CLEAN = new Calls(100, 0, 0);

  @Test
  void afterThrottlingTheCapGrowsBackAdditivelyToNormal() {
    Decision d = new Decision(Mode.THROTTLED, 4, "throttled", NOW);
    for (int i = 1; i <= 12; i++) {
      Decision next = GovernorPolicy.decide(SETTINGS, d, healthyWith(NOW, CLEAN));
      assertEquals(Math.min(16, d.cap() + 1), next.cap(), "one more per decision");
      d = next;
    }
    assertEquals(Mode.NORMAL, d.mode());
    assertEquals(16, d.cap());
  }

  @Test
  void noStepUpBeforeCallsMadeAtTheCapHaveBeenRead() {
    Decision d = new Decision(Mode.NORMAL, 10, "earlier", null);
    Decision held = GovernorPolicy.decide(SETTINGS, d, healthy());
    assertEquals(Mode.NORMAL, held.mode());
    assertEquals(10, held.cap(), "no calls read at 10 yet: a step up would be blind");
    assertEquals(11, GovernorPolicy.decide(SETTINGS, held, healthyWith(NOW, CLEAN)).cap());
  }

  @Test
  void staleClaimsRaiseAnAlertAndNeverAddCapacity() {
    // even with the deadline at risk, stale claims mean the lease is wrong, not the capacity
    Signals staleAndLate =
        new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, Calls.NONE, 5);
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
        new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, Calls.NONE, 5, 2);
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
    Signals everything =
        new Signals(NOW, NOW.plus(Duration.ofHours(3)), 100_000, 9, 60, HALF_OF_40, 9, 1);
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

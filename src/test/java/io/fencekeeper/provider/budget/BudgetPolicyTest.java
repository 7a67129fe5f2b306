package io.fencekeeper.provider.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.budget.BudgetPolicy.Aimd;
import io.fencekeeper.provider.budget.BudgetPolicy.Decision;
import io.fencekeeper.provider.budget.BudgetPolicy.Signals;
import io.fencekeeper.provider.budget.ThrottleShare.Calls;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * One test per row of the budget's decision table, and the AIMD shape; over time, in {@link
 * BudgetBookTest}.
 */
class BudgetPolicyTest {

  static final Instant NOW = Instant.parse("2026-11-30T02:00:00Z");
  static final Duration COOLDOWN = Duration.ofSeconds(2);
  static final ProviderBudget BUDGET = new ProviderBudget(16, 80);

  /** Half of the calls of every caller throttled: the provider limits them. */
  static Signals throttled(Instant at, int answers) {
    return new Signals(at, new Calls(2L * answers, answers, 250));
  }

  @Test
  void aShareOfHalfTheCallsThrottledHalvesTheBudgetAndItsRateWithTheReason() {
    Decision d = BudgetPolicy.decide(BUDGET, Aimd.full(BUDGET), throttled(NOW, 20), COOLDOWN);
    assertTrue(d.changed());
    assertEquals(8, d.next().effective());
    assertEquals(40, BUDGET.rateAt(d.next().effective()));
    assertEquals(
        "50.0 % of 40 calls throttled (20) (Retry-After 250 ms): 16 in flight (80 calls/s) -> 8"
            + " in flight (40 calls/s)",
        d.reason());
  }

  @Test
  void aShareJustAboveTheCutCutsToTheShareTheProviderAccepted() {
    Decision d =
        BudgetPolicy.decide(
            BUDGET, Aimd.full(BUDGET), new Signals(NOW, new Calls(400, 40, 50)), COOLDOWN);
    assertEquals(14, d.next().effective(), "16 x 0.9, rounded down");
    assertEquals(70, BUDGET.rateAt(14));
  }

  @Test
  void noiseOfOnePercentAndFewThrottledCallsNeverCut() {
    Aimd full = Aimd.full(BUDGET);
    assertFalse(
        BudgetPolicy.decide(BUDGET, full, new Signals(NOW, new Calls(1000, 10, 100)), COOLDOWN)
            .changed(),
        "1 % of 1,000 calls: noise");
    assertFalse(
        BudgetPolicy.decide(BUDGET, full, new Signals(NOW, new Calls(10, 5, 100)), COOLDOWN)
            .changed(),
        "five 429s are too few to tell a limit from noise");
  }

  @Test
  void someThrottlingBelowTheCutHoldsTheBudgetWhereItIs() {
    Aimd d = new Aimd(4, NOW, NOW);
    Decision held =
        BudgetPolicy.decide(
            BUDGET, d, new Signals(NOW.plusSeconds(5), new Calls(400, 12, 0)), COOLDOWN);
    assertFalse(held.changed(), "3 %: no step up");
    assertTrue(
        BudgetPolicy.decide(
                BUDGET, d, new Signals(NOW.plusSeconds(5), new Calls(400, 4, 0)), COOLDOWN)
            .changed(),
        "1 %: one step up");
  }

  @Test
  void nothingGrowsForAWindowAfterACutOrTheLongerRetryAfter() {
    Aimd cut =
        BudgetPolicy.decide(
                BUDGET, Aimd.full(BUDGET), new Signals(NOW, new Calls(40, 20, 100)), COOLDOWN)
            .next();
    assertEquals(8, cut.effective());
    assertFalse(
        BudgetPolicy.decide(BUDGET, cut, Signals.quiet(NOW.plusMillis(4900)), COOLDOWN).changed(),
        "past the cool-down, within a window of the cut");
    assertEquals(
        9,
        BudgetPolicy.decide(BUDGET, cut, Signals.quiet(NOW.plus(ThrottleShare.WINDOW)), COOLDOWN)
            .next()
            .effective());
    Aimd asked =
        BudgetPolicy.decide(
                BUDGET, Aimd.full(BUDGET), new Signals(NOW, new Calls(40, 20, 8000)), COOLDOWN)
            .next();
    assertFalse(
        BudgetPolicy.decide(BUDGET, asked, Signals.quiet(NOW.plusMillis(7900)), COOLDOWN).changed(),
        "the provider asked to wait longer");
  }

  @Test
  void oneOverloadIsOneCutWithinTheCooldown() {
    Aimd halved =
        BudgetPolicy.decide(BUDGET, Aimd.full(BUDGET), throttled(NOW, 10), COOLDOWN).next();
    Decision again =
        BudgetPolicy.decide(BUDGET, halved, throttled(NOW.plusMillis(1500), 9), COOLDOWN);
    assertFalse(again.changed());
    assertEquals(8, again.next().effective());
    Decision later =
        BudgetPolicy.decide(BUDGET, halved, throttled(NOW.plusSeconds(2), 10), COOLDOWN);
    assertEquals(4, later.next().effective());
  }

  @Test
  void neverBelowOnePermitNorOneCallASecond() {
    Aimd d = Aimd.full(BUDGET);
    for (int i = 0; i < 10; i++) {
      d = BudgetPolicy.decide(BUDGET, d, throttled(NOW.plusSeconds(3L * i), 10), COOLDOWN).next();
    }
    assertEquals(1, d.effective());
    assertEquals(5, BUDGET.rateAt(1));
    assertEquals(1, new ProviderBudget(16, 4).rateAt(1));
  }

  @Test
  void afterTheCooldownItGrowsBackByOneASecondUpToTheBudget() {
    Aimd d = new Aimd(4, NOW, NOW);
    // within the cool-down nothing grows
    assertEquals(
        4,
        BudgetPolicy.decide(BUDGET, d, Signals.quiet(NOW.plusSeconds(1)), COOLDOWN)
            .next()
            .effective());
    Instant t = NOW.plusSeconds(2);
    for (int expected = 5; expected <= 16; expected++) {
      Decision up = BudgetPolicy.decide(BUDGET, d, Signals.quiet(t), COOLDOWN);
      assertTrue(up.changed(), "step to " + expected);
      d = up.next();
      assertEquals(expected, d.effective());
      // a quarter of a second later: not yet another step
      assertFalse(
          BudgetPolicy.decide(BUDGET, d, Signals.quiet(t.plusMillis(250)), COOLDOWN).changed());
      t = t.plusSeconds(1);
    }
    assertFalse(
        BudgetPolicy.decide(BUDGET, d, Signals.quiet(t.plusSeconds(5)), COOLDOWN).changed());
    assertEquals(16, d.effective());
  }

  @Test
  void throttlingWithinTheCooldownPutsTheNextStepOff() {
    Aimd d = new Aimd(4, NOW, NOW);
    Aimd held =
        BudgetPolicy.decide(BUDGET, d, throttled(NOW.plusMillis(1900), 10), COOLDOWN).next();
    assertEquals(4, held.effective());
    assertFalse(
        BudgetPolicy.decide(BUDGET, held, Signals.quiet(NOW.plusMillis(2100)), COOLDOWN).changed());
    assertTrue(
        BudgetPolicy.decide(BUDGET, held, Signals.quiet(NOW.plusMillis(2900)), COOLDOWN).changed());
  }

  @Test
  void aProviderWithoutABudgetHasNothingToDecide() {
    Decision d =
        BudgetPolicy.decide(
            ProviderBudget.NONE, Aimd.full(ProviderBudget.NONE), throttled(NOW, 50), COOLDOWN);
    assertFalse(d.changed());
  }
}

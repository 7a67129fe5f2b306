package io.fencekeeper.provider.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.provider.budget.ThrottleShare.Calls;
import io.fencekeeper.provider.budget.ThrottleShare.Reading;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The reading of throttling as a share of calls, the cut, the window and the hold after a cut; the
 * governor's and the budget's decisions over them are in GovernorPolicyTest and BudgetPolicyTest.
 */
class ThrottleShareTest {

  static final Instant T = Instant.parse("2026-11-30T02:00:00Z");
  static final long SECOND = 1_000_000_000L;

  @Test
  void aShareAboveFivePercentWithSixThrottledCallsIsALimit() {
    assertEquals(Reading.LIMITING, new Calls(100, 6, 0).reading());
    assertEquals(Reading.SOME, new Calls(120, 6, 0).reading(), "5 % exactly is not above it");
    assertEquals(Reading.SOME, new Calls(20, 5, 0).reading(), "five 429s are too few to tell");
    assertEquals(Reading.SOME, new Calls(400, 10, 0).reading(), "2.5 %: hold");
    assertEquals(Reading.CLEAR, new Calls(1000, 10, 0).reading(), "1 %: noise");
    assertEquals(Reading.CLEAR, Calls.NONE.reading());
    // a node of a version that did not count its calls: all of its 429s count as the share
    assertEquals(Reading.LIMITING, new Calls(0, 6, 0).reading());
  }

  @Test
  void aCutKeepsTheShareTheProviderAcceptedAtLeastHalfAndOneLess() {
    assertEquals(14, ThrottleShare.cut(16, 0.10, 0.5, 1));
    assertEquals(8, ThrottleShare.cut(16, 0.80, 0.5, 1), "at most by half");
    assertEquals(15, ThrottleShare.cut(16, 0.01, 0.5, 1), "at least by one");
    assertEquals(2, ThrottleShare.cut(2, 0.90, 0.5, 2), "never below the minimum");
  }

  @Test
  void theWindowAddsUpTheLastFiveSecondsAndForgetsOnClear() {
    ThrottleShare.Window window = new ThrottleShare.Window();
    window.add(0, new Calls(40, 3, 100));
    window.add(SECOND / 10, new Calls(10, 1, 250));
    window.add(2 * SECOND, new Calls(50, 2, 0));

    assertEquals(new Calls(100, 6, 250), window.sum(4 * SECOND));
    assertEquals(new Calls(50, 2, 0), window.sum(5 * SECOND), "the first bucket left after 5 s");
    window.clear();
    assertEquals(Calls.NONE, window.sum(5 * SECOND));
  }

  @Test
  void theHoldAfterACutIsAWindowOrTheLongerRetryAfter() {
    Calls noWait = new Calls(40, 20, 0);
    assertEquals(ThrottleShare.WINDOW, ThrottleShare.holdAfterCut(noWait, T, null, null));
    assertEquals(
        Duration.ofSeconds(8),
        ThrottleShare.holdAfterCut(new Calls(40, 20, 8000), T, null, null),
        "the provider asked to wait longer");
    assertEquals(
        ThrottleShare.MAX_WAIT,
        ThrottleShare.holdAfterCut(new Calls(40, 20, 3_600_000), T, null, null),
        "10 s at most");
    // a cut while the last hold still runs: still coming down, not a step up that failed
    assertEquals(
        ThrottleShare.WINDOW,
        ThrottleShare.holdAfterCut(noWait, T, T.minusSeconds(2), T.plusSeconds(3)));
  }

  @Test
  void aStepUpThatMeetsTheLimitAgainDoublesTheHoldUpToItsMost() {
    Calls limiting = new Calls(40, 20, 0);
    Instant cut = T;
    Instant holdEnd = T.plus(ThrottleShare.WINDOW);
    Duration hold = ThrottleShare.WINDOW;
    for (int probe = 1; probe <= 6; probe++) {
      // the first step up after the hold meets the limit again 3 s later
      Instant next = holdEnd.plusSeconds(3);
      Duration doubled = ThrottleShare.holdAfterCut(limiting, next, cut, holdEnd);
      Duration expected = hold.multipliedBy(2);
      assertEquals(
          expected.compareTo(ThrottleShare.MAX_HOLD) > 0 ? ThrottleShare.MAX_HOLD : expected,
          doubled,
          "probe " + probe);
      hold = doubled;
      cut = next;
      holdEnd = next.plus(doubled);
    }
    assertEquals(ThrottleShare.MAX_HOLD, hold);
    // steps up that held for two windows: the limit moved, the next cut holds a window again
    assertEquals(
        ThrottleShare.MAX_HOLD,
        ThrottleShare.holdAfterCut(limiting, holdEnd.plusSeconds(9), cut, holdEnd),
        "two steps up and the window after them still end the probe");
    assertEquals(
        ThrottleShare.WINDOW,
        ThrottleShare.holdAfterCut(limiting, holdEnd.plus(ThrottleShare.PROBE), cut, holdEnd));
  }
}

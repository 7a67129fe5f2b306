package io.fencekeeper.run.governor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * The pace of an item in flight holds its best over ten seconds: a node that joins adds its items
 * in flight at once and its rate later, and the fleet must not read that as a slower provider.
 */
class FleetPaceTest {

  static final long SECOND = 1_000_000_000L;

  @Test
  void aNodeThatJoinsDoesNotLowerThePaceUntilItsRateCatchesUp() {
    FleetPace pace = new FleetPace();
    assertEquals(0, pace.best(0, 0, 0), "nothing measured yet");
    assertEquals(10.0, pace.best(1 * SECOND, 20, 2), "20 items/s with 2 in flight");
    // a second node's 2 workers are busy at once; the run's ten-second rate has not moved yet
    assertEquals(10.0, pace.best(2 * SECOND, 20, 4), "held at its best");
    assertEquals(10.0, pace.best(6 * SECOND, 30, 4));
    assertEquals(10.0, pace.best(9 * SECOND, 40, 4), "caught up");
  }

  @Test
  void aPaceThatTrulyFallsShowsOnceTheWindowHasPassed() {
    FleetPace pace = new FleetPace();
    pace.best(0, 20, 2);
    for (long s = 1; s <= 10; s++) {
      assertEquals(
          10.0, pace.best(s * SECOND, 8, 2), "within ten seconds of the best, second " + s);
    }
    assertEquals(4.0, pace.best(11 * SECOND, 8, 2), "the provider is slower now");
  }

  @Test
  void askedManyTimesASecondItKeepsOneSampleATenthOfASecond() {
    FleetPace pace = new FleetPace();
    pace.best(0, 10, 1);
    for (int i = 1; i <= 10_000; i++) {
      pace.best(i * 1_000L, 1, 1); // every microsecond, within the first tenth of a second
    }
    assertEquals(10.0, pace.best(SECOND / 10, 1, 1), "the ones inside a tenth were not kept");
    assertEquals(1.0, pace.best(11 * SECOND, 1, 1), "and the window still ages out");
  }
}

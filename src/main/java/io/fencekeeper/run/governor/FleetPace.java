package io.fencekeeper.run.governor;

import java.util.ArrayDeque;

/**
 * How fast one item in flight of a run completes, at its best over the last ten seconds: the nodes'
 * rates are averaged over ten seconds while their items in flight are counted at one instant, so
 * right after a node joins its items count at once and its rate only later, and the plain ratio
 * would fall for a few seconds and ask the fleet for nodes it does not need (an autoscaler adds
 * them at once). The best of the window holds through that; a pace that truly falls (a slower
 * provider) shows ten seconds later.
 */
public final class FleetPace {

  static final long WINDOW_NANOS = 10_000_000_000L;

  private record Sample(long nanos, double perItem) {}

  private final ArrayDeque<Sample> samples = new ArrayDeque<>();

  /**
   * Records the pace of now ({@code itemsPerSecond} with {@code inFlight} items in flight; none
   * when either is 0) and returns the best of the window, 0 when there is none.
   */
  public double best(long nanos, double itemsPerSecond, long inFlight) {
    while (!samples.isEmpty() && nanos - samples.peekFirst().nanos() > WINDOW_NANOS) {
      samples.pollFirst();
    }
    if (itemsPerSecond > 0 && inFlight > 0) {
      // one sample per tenth of a second at most: asked many times a second, it stays small
      if (samples.isEmpty() || nanos - samples.peekLast().nanos() >= WINDOW_NANOS / 100) {
        samples.add(new Sample(nanos, itemsPerSecond / inFlight));
      }
    }
    double best = 0;
    for (Sample s : samples) {
      best = Math.max(best, s.perItem());
    }
    return best;
  }
}

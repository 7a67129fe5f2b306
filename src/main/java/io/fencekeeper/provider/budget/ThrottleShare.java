package io.fencekeeper.provider.budget;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;

/**
 * Throttling read as a rate, not answer by answer (docs/design.md, "The governor"): the share of a
 * provider's calls answered 429 over the last few seconds says whether the provider limits its
 * callers, and by how much. One 429 in a hundred calls is a provider's noise, and the call that met
 * it waits its Retry-After; a share that rises past a few percent is a provider asking for less.
 * The rule each reader of throttling follows: each run's governor ({@code GovernorPolicy}), the
 * keeper of a provider's budget ({@link BudgetPolicy}) and each node's permits ({@link PermitPool},
 * which pauses its callers for a Retry-After only when the share says so).
 *
 * <table>
 *   <caption>the reading of a window of calls</caption>
 *   <tr><th>throttled calls in the window</th><th>reading</th><th>what callers do</th></tr>
 *   <tr><td>at least {@value #MIN_THROTTLED} and above 5 %</td><td>LIMITING</td>
 *       <td>cut, to the share the provider accepted (at most by half), and add nothing for a
 *       window (twice the last hold when the first step up after it met the limit again), or the
 *       largest Retry-After when longer</td></tr>
 *   <tr><td>2.5 % or more</td><td>SOME</td><td>hold: add nothing</td></tr>
 *   <tr><td>below 2.5 %</td><td>CLEAR</td><td>grow as usual</td></tr>
 * </table>
 */
public final class ThrottleShare {

  private ThrottleShare() {}

  /**
   * How far back the share looks. Long enough to hold a hundred calls at 20 calls a second, so that
   * noise of 1 % stays well below the cut (its standard error at 100 calls is 1 %); short enough
   * that a provider that starts to limit is read as limiting within a second or two (a share of 80
   * % in the last second of a quiet window is 16 % of the window).
   */
  public static final Duration WINDOW = Duration.ofSeconds(5);

  /**
   * Above this share the provider limits its callers. A caller that settles just below it loses at
   * most a twentieth of its calls to 429s, and noise of 1 % is four standard errors away at a
   * hundred calls.
   */
  public static final double LIMITING_ABOVE = 0.05;

  /**
   * Below this share nothing holds growth back: twice noise of 1 %, half the cut, so that a caller
   * that grows into a provider's limit stops growing before it is cut.
   */
  public static final double CLEAR_BELOW = 0.025;

  /**
   * Fewer throttled calls than this never read as limiting, whatever their share: with few calls in
   * the window (a slow provider), two or three 429s of noise are a large share. Noise of 1 % reads
   * as limiting in at most 1.3 windows in a thousand (the worst case, 119 calls, where six are just
   * over 5 %; with four it would be 8 in a thousand); a provider that starts to refuse most calls
   * is still read as limiting within two seconds at three calls a second.
   */
  public static final long MIN_THROTTLED = 6;

  /** The longest Retry-After that holds growth, or a node's calls, back. */
  public static final Duration MAX_WAIT = Duration.ofSeconds(10);

  public enum Reading {
    /** Throttling is noise, or none: grow as usual. */
    CLEAR,
    /** Some throttling, below the cut: add nothing. */
    SOME,
    /** The provider limits its callers: cut. */
    LIMITING
  }

  /**
   * Provider calls that ended, how many of them were throttled (429 / Retry-After), and the largest
   * Retry-After asked (milliseconds).
   */
  public record Calls(long calls, long throttled, long retryAfterMillis) {

    public static final Calls NONE = new Calls(0, 0, 0);

    /** One call that ended, throttled with {@code retryAfter} or not (null). */
    public static Calls one(Duration retryAfter) {
      return retryAfter == null ? new Calls(1, 0, 0) : new Calls(1, 1, retryAfter.toMillis());
    }

    public Calls plus(Calls other) {
      return new Calls(
          calls + other.calls,
          throttled + other.throttled,
          Math.max(retryAfterMillis, other.retryAfterMillis));
    }

    /**
     * Throttled calls over calls; a count of throttled calls without calls (a node of a version
     * that did not count calls) reads as all throttled.
     */
    public double share() {
      if (calls <= 0) {
        return throttled > 0 ? 1.0 : 0.0;
      }
      return Math.min(1.0, (double) throttled / calls);
    }

    public Reading reading() {
      double share = share();
      if (throttled >= MIN_THROTTLED && share > LIMITING_ABOVE) {
        return Reading.LIMITING;
      }
      return share >= CLEAR_BELOW ? Reading.SOME : Reading.CLEAR;
    }

    /** How long the provider asked its callers to wait, at most {@link #MAX_WAIT}. */
    public Duration waitAsked() {
      return Duration.ofMillis(Math.min(Math.max(0, retryAfterMillis), MAX_WAIT.toMillis()));
    }

    /** "6.0 % of 480 calls throttled", for reasons an operator reads. */
    public String describe() {
      return String.format(
          java.util.Locale.ROOT,
          "%.1f %% of %d calls throttled (%d)",
          share() * 100,
          calls,
          throttled);
    }
  }

  /**
   * The multiplicative decrease: to the share of calls the provider accepted ({@code 1 - share} of
   * {@code value}: what was offered times what got through is what the provider takes), but by no
   * more than {@code floor} of it in one step, by at least one, and never below {@code min}.
   */
  public static int cut(int value, double share, double floor, int min) {
    double keep = Math.max(floor, 1 - share);
    int cut = Math.min(value - 1, (int) Math.floor(value * keep));
    return Math.max(min, cut);
  }

  /** The longest hold after a cut, when step after step up met the limit again. */
  public static final Duration MAX_HOLD = Duration.ofSeconds(40);

  /**
   * How long after a hold a cut still ends the probe that followed it: two windows, a few steps up
   * (one every other second) and the window that reads the last of them. On the bench the limit was
   * met again two steps above the cap a cut had left, 6 s after the hold.
   */
  public static final Duration PROBE = WINDOW.multipliedBy(2);

  /**
   * How long nothing grows after a cut at {@code now}. A whole {@link #WINDOW}, so that what the
   * cut did is read over a window of its own before the next step up probes the provider again (a
   * caller that grew every second into a limit it had just met would spend a tenth of its calls on
   * 429s). Twice the last hold (up to {@link #MAX_HOLD}) when this cut comes within {@link #PROBE}
   * of the end of the last one: the first steps up after it met the limit again, and where a step
   * is a large part of what the provider takes (5 items in flight fill it, a step is 20 % over),
   * each probe costs more 429s than the hold's seconds make up for; so a limit that holds is probed
   * less and less often, and one that lifts is found again within {@link #MAX_HOLD}. The
   * Retry-After asked, when longer ({@link #MAX_WAIT} at most). {@code lastCut} and {@code
   * lastHoldEnd}: the previous cut and the end of its hold, null when there was none.
   */
  public static Duration holdAfterCut(
      Calls window, Instant now, Instant lastCut, Instant lastHoldEnd) {
    Duration hold = WINDOW;
    if (lastCut != null
        && lastHoldEnd != null
        && !now.isBefore(lastHoldEnd)
        && now.isBefore(lastHoldEnd.plus(PROBE))) {
      Duration twice = Duration.between(lastCut, lastHoldEnd).multipliedBy(2);
      hold =
          twice.compareTo(MAX_HOLD) > 0 ? MAX_HOLD : twice.compareTo(WINDOW) < 0 ? WINDOW : twice;
    }
    Duration asked = window.waitAsked();
    return asked.compareTo(hold) > 0 ? asked : hold;
  }

  /**
   * The calls of the last {@link #WINDOW}, in buckets of a quarter second so that its size does not
   * grow with the calls. Time is any clock in nanoseconds that only moves forward. Not thread-safe.
   */
  public static final class Window {

    private static final long BUCKET = Duration.ofMillis(250).toNanos();
    private static final long SPAN = WINDOW.toNanos();

    // {start, calls, throttled, retryAfterMillis}, oldest first
    private final ArrayDeque<long[]> buckets = new ArrayDeque<>();

    public void add(long nowNanos, Calls calls) {
      if (calls.calls() == 0 && calls.throttled() == 0) {
        return;
      }
      long[] last = buckets.peekLast();
      if (last == null || nowNanos - last[0] >= BUCKET) {
        last = new long[] {nowNanos, 0, 0, 0};
        buckets.addLast(last);
      }
      last[1] += calls.calls();
      last[2] += calls.throttled();
      last[3] = Math.max(last[3], calls.retryAfterMillis());
    }

    /**
     * Forgets every call so far: when the caller changes how much it calls, the share is read
     * afresh, not mixed with the calls made before.
     */
    public void clear() {
      buckets.clear();
    }

    /** The calls of the last {@link #WINDOW} up to {@code nowNanos}. */
    public Calls sum(long nowNanos) {
      while (!buckets.isEmpty() && nowNanos - buckets.peekFirst()[0] >= SPAN) {
        buckets.pollFirst();
      }
      long calls = 0;
      long throttled = 0;
      long retryAfter = 0;
      for (long[] b : buckets) {
        calls += b[1];
        throttled += b[2];
        retryAfter = Math.max(retryAfter, b[3]);
      }
      return new Calls(calls, throttled, retryAfter);
    }
  }
}

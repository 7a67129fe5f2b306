package io.fencekeeper.run.governor;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.provider.budget.ThrottleShare;
import java.time.Duration;
import java.time.Instant;

/**
 * The latency-versus-cost governor as a pure function (docs/design.md, "The governor"): from what a
 * run observes to how many provider calls it may have in flight across the whole cluster. More
 * workers reduce elapsed time only until the provider, the store or the retry queue becomes the
 * limit, so:
 *
 * <table>
 *   <caption>decision table, first matching row wins</caption>
 *   <tr><th>signal</th><th>decision</th></tr>
 *   <tr><td>the share of the run's calls throttled over the last seconds says the provider limits
 *       it ({@link ThrottleShare}: more than 5 %)</td>
 *       <td>THROTTLED: multiplicative decrease to the share the provider accepted (at most by
 *       half), at most once per cool-down</td></tr>
 *   <tr><td>some throttling (2.5 % or more) after THROTTLED</td>
 *       <td>THROTTLED: hold</td></tr>
 *   <tr><td>items quarantined in the last minute (their holders vanished attempt after
 *       attempt)</td>
 *       <td>ALERT_QUARANTINE: raise an alert, never add capacity</td></tr>
 *   <tr><td>stale rejections or takeovers above the threshold</td>
 *       <td>ALERT_STALE: raise an alert, never add capacity</td></tr>
 *   <tr><td>within the hold after the last decrease ({@link ThrottleShare#holdAfterCut}: a
 *       window, longer while steps up meet the limit again, or the Retry-After asked)</td>
 *       <td>THROTTLED: hold</td></tr>
 *   <tr><td>projected finish too close to the deadline</td>
 *       <td>BURST: doubling up to the burst cap</td></tr>
 *   <tr><td>otherwise</td><td>NORMAL: additive increase back to the normal cap</td></tr>
 * </table>
 *
 * <p>Some throttling (2.5-5 %) in any other mode adds no capacity: BURST and NORMAL hold the cap
 * they have (NORMAL still steps down from a burst).
 */
public final class GovernorPolicy {

  private GovernorPolicy() {}

  public enum Mode {
    NORMAL,
    BURST,
    THROTTLED,
    ALERT_STALE,
    ALERT_QUARANTINE
  }

  /**
   * What the run saw.
   *
   * @param calls the run's provider calls over the last seconds ({@link ThrottleShare#WINDOW},
   *     since the cap last changed at most: {@link RunGovernor}), the throttled ones among them,
   *     and the largest Retry-After asked
   * @param staleInWindow attempts that lost their lease, and takeovers of expired leases, since the
   *     last decision
   * @param quarantinedRecently items quarantined in the last minute ({@link RunGovernor})
   */
  public record Signals(
      Instant now,
      Instant deadline,
      long remainingItems,
      double itemsPerSecond,
      double backlogAgeSeconds,
      ThrottleShare.Calls calls,
      long staleInWindow,
      long quarantinedRecently) {

    public Signals {
      calls = calls == null ? ThrottleShare.Calls.NONE : calls;
    }

    /** Signals without quarantined items. */
    public Signals(
        Instant now,
        Instant deadline,
        long remainingItems,
        double itemsPerSecond,
        double backlogAgeSeconds,
        ThrottleShare.Calls calls,
        long staleInWindow) {
      this(
          now,
          deadline,
          remainingItems,
          itemsPerSecond,
          backlogAgeSeconds,
          calls,
          staleInWindow,
          0);
    }
  }

  /**
   * The cap now in force and why; {@code lastDecrease} paces the multiplicative decrease, {@code
   * waitUntil} is when growth may resume after it ({@link ThrottleShare#holdAfterCut}).
   */
  public record Decision(Mode mode, int cap, String reason, Instant lastDecrease, Instant waitUntil)
      implements CborSerializable {

    public Decision(Mode mode, int cap, String reason, Instant lastDecrease) {
      this(mode, cap, reason, lastDecrease, null);
    }

    public static Decision initial(GovernorSettings settings) {
      return new Decision(Mode.NORMAL, settings.normalCap(), "start at the normal cap", null);
    }

    /** The same pacing of decreases, another mode, cap and reason. */
    Decision next(Mode nextMode, int nextCap, String nextReason) {
      return new Decision(nextMode, nextCap, nextReason, lastDecrease, waitUntil);
    }
  }

  public static Decision decide(GovernorSettings settings, Decision previous, Signals signals) {
    int cap = Math.max(settings.minCap(), Math.min(previous.cap(), settings.burstCap()));
    ThrottleShare.Calls calls = signals.calls();
    ThrottleShare.Reading reading = calls.reading();
    Instant now = signals.now();
    if (reading == ThrottleShare.Reading.LIMITING) {
      boolean coolingDown =
          previous.lastDecrease() != null
              && now.isBefore(previous.lastDecrease().plus(settings.decreaseCooldown()));
      if (coolingDown || cap == settings.minCap()) {
        return previous.next(
            Mode.THROTTLED,
            cap,
            calls.describe()
                + ": concurrency held at "
                + cap
                + (coolingDown ? " (one decrease per cool-down)" : " (the minimum)"));
      }
      int decreased =
          ThrottleShare.cut(cap, calls.share(), settings.decreaseFactor(), settings.minCap());
      Duration hold =
          ThrottleShare.holdAfterCut(calls, now, previous.lastDecrease(), previous.waitUntil());
      return new Decision(
          Mode.THROTTLED,
          decreased,
          calls.describe()
              + ": concurrency "
              + cap
              + " -> "
              + decreased
              + ", nothing added for "
              + hold.toMillis()
              + " ms",
          now,
          now.plus(hold));
    }
    if (reading == ThrottleShare.Reading.SOME && previous.mode() == Mode.THROTTLED) {
      // below the cut, above the all-clear: the provider is at its limit, stay there
      return previous.next(Mode.THROTTLED, cap, calls.describe() + ": concurrency held at " + cap);
    }
    // some throttling below the cut adds no capacity, whatever else the run needs
    boolean mayGrow = reading == ThrottleShare.Reading.CLEAR;
    if (signals.quarantinedRecently() > 0) {
      // a poison item kills the holder it is handed to: more workers only lose more nodes
      int held = Math.min(cap, settings.normalCap());
      return previous.next(
          Mode.ALERT_QUARANTINE,
          held,
          signals.quarantinedRecently()
              + " items quarantined: their holders were lost attempt after attempt; inspect the"
              + " provider adapter and the nodes' logs; capacity held at "
              + held);
    }
    if (signals.staleInWindow() >= settings.staleAlertThreshold()) {
      // more workers would only expire more leases: look at the lease duration instead
      int held = Math.min(cap, settings.normalCap());
      return previous.next(
          Mode.ALERT_STALE,
          held,
          signals.staleInWindow()
              + " stale rejections or takeovers: inspect the lease duration and pauses; capacity"
              + " held at "
              + held);
    }
    if (previous.waitUntil() != null && now.isBefore(previous.waitUntil())) {
      // right after a decrease: a whole window tells whether it was enough, and the provider may
      // have asked its callers to wait; more calls now would only meet more 429s
      return previous.next(
          Mode.THROTTLED,
          cap,
          "after the decrease, nothing added until "
              + previous.waitUntil()
              + ": concurrency held at "
              + cap);
    }
    if (deadlineAtRisk(settings, signals, signals.itemsPerSecond())) {
      // a deadline does not wait for additive increase: double, bounded by the burst cap
      int raised = mayGrow ? Math.min(settings.burstCap(), Math.max(cap + 1, cap * 2)) : cap;
      return previous.next(
          Mode.BURST,
          raised,
          "projected finish "
              + projectedFinish(signals)
              + " too close to the deadline "
              + signals.deadline()
              + ": concurrency "
              + cap
              + " -> "
              + raised
              + (mayGrow ? "" : " (" + calls.describe() + ": nothing added)"));
    }
    if (cap > settings.normalCap()
        && deadlineAtRisk(
            settings, signals, signals.itemsPerSecond() * settings.normalCap() / cap)) {
      // the burst is what keeps the run on time: dropping to the normal cap would miss it again
      return previous.next(
          Mode.BURST,
          cap,
          "burst holds at "
              + cap
              + ": at the normal cap "
              + settings.normalCap()
              + " the projected finish would miss the deadline "
              + signals.deadline());
    }
    int target = settings.normalCap();
    // back towards normal one step at a time, from below (after throttling) or from above (burst);
    // a step up only once calls made at this cap have been read: a step into a provider's limit
    // then shows before the next one
    boolean read = calls.calls() > 0;
    int up = mayGrow && read ? cap + 1 : cap;
    int next = cap < target ? up : cap > target ? cap - Math.max(1, (cap - target) / 2) : cap;
    String reason;
    if (next == previous.cap() && previous.mode() == Mode.NORMAL) {
      reason = previous.reason();
    } else if (next == cap && cap < target) {
      reason =
          (mayGrow ? "no calls read at this concurrency yet" : calls.describe())
              + ": concurrency held at "
              + cap
              + " (normal "
              + target
              + ")";
    } else {
      reason = "healthy: concurrency " + cap + " -> " + next + " (normal " + target + ")";
    }
    return previous.next(Mode.NORMAL, next, reason);
  }

  /**
   * At risk when the projected finish falls after the part of the remaining time the margin allows
   * (by default 90 %); with nothing finished yet, only once a tenth of the time has gone by.
   */
  static boolean deadlineAtRisk(GovernorSettings settings, Signals signals, double itemsPerSecond) {
    if (signals.remainingItems() == 0 || !signals.now().isBefore(signals.deadline())) {
      return false;
    }
    // seconds first: a far deadline must not overflow a count of milliseconds
    double remainingMillis =
        Duration.between(signals.now(), signals.deadline()).getSeconds() * 1000.0;
    if (itemsPerSecond <= 0) {
      return signals.backlogAgeSeconds() * 1000 > remainingMillis * 0.1;
    }
    double neededMillis = signals.remainingItems() / itemsPerSecond * 1000;
    return neededMillis > remainingMillis * settings.deadlineMargin();
  }

  static Instant projectedFinish(Signals signals) {
    if (signals.itemsPerSecond() <= 0) {
      return null;
    }
    return signals
        .now()
        .plusMillis((long) (signals.remainingItems() / signals.itemsPerSecond() * 1000));
  }
}

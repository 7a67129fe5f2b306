package io.fencekeeper.run.governor;

import io.fencekeeper.CborSerializable;
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
 *   <tr><td>throttling (429 / Retry-After) seen in the last window</td>
 *       <td>THROTTLED: multiplicative decrease, at most once per cool-down</td></tr>
 *   <tr><td>items quarantined in the last minute (their holders vanished attempt after
 *       attempt)</td>
 *       <td>ALERT_QUARANTINE: raise an alert, never add capacity</td></tr>
 *   <tr><td>stale rejections or takeovers above the threshold</td>
 *       <td>ALERT_STALE: raise an alert, never add capacity</td></tr>
 *   <tr><td>projected finish too close to the deadline</td>
 *       <td>BURST: doubling up to the burst cap</td></tr>
 *   <tr><td>otherwise</td><td>NORMAL: additive increase back to the normal cap</td></tr>
 * </table>
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
   * What the run saw over the last window.
   *
   * @param throttledInWindow provider answers that were 429 / Retry-After since the last decision
   * @param staleInWindow attempts that lost their lease, and takeovers of expired leases
   * @param quarantinedRecently items quarantined in the last minute ({@link RunGovernor})
   */
  public record Signals(
      Instant now,
      Instant deadline,
      long remainingItems,
      double itemsPerSecond,
      double backlogAgeSeconds,
      long throttledInWindow,
      long staleInWindow,
      long quarantinedRecently) {

    /** Signals without quarantined items. */
    public Signals(
        Instant now,
        Instant deadline,
        long remainingItems,
        double itemsPerSecond,
        double backlogAgeSeconds,
        long throttledInWindow,
        long staleInWindow) {
      this(
          now,
          deadline,
          remainingItems,
          itemsPerSecond,
          backlogAgeSeconds,
          throttledInWindow,
          staleInWindow,
          0);
    }
  }

  /** The cap now in force and why; {@code lastDecrease} paces the multiplicative decrease. */
  public record Decision(Mode mode, int cap, String reason, Instant lastDecrease)
      implements CborSerializable {

    public static Decision initial(GovernorSettings settings) {
      return new Decision(Mode.NORMAL, settings.normalCap(), "start at the normal cap", null);
    }
  }

  public static Decision decide(GovernorSettings settings, Decision previous, Signals signals) {
    int cap = Math.max(settings.minCap(), Math.min(previous.cap(), settings.burstCap()));
    if (signals.throttledInWindow() > 0) {
      boolean coolingDown =
          previous.lastDecrease() != null
              && signals.now().isBefore(previous.lastDecrease().plus(settings.decreaseCooldown()));
      if (coolingDown) {
        return new Decision(Mode.THROTTLED, cap, previous.reason(), previous.lastDecrease());
      }
      int decreased =
          Math.max(settings.minCap(), (int) Math.floor(cap * settings.decreaseFactor()));
      return new Decision(
          Mode.THROTTLED,
          decreased,
          signals.throttledInWindow()
              + " throttled answers: concurrency "
              + cap
              + " -> "
              + decreased,
          signals.now());
    }
    if (signals.quarantinedRecently() > 0) {
      // a poison item kills the holder it is handed to: more workers only lose more nodes
      int held = Math.min(cap, settings.normalCap());
      return new Decision(
          Mode.ALERT_QUARANTINE,
          held,
          signals.quarantinedRecently()
              + " items quarantined: their holders were lost attempt after attempt; inspect the"
              + " provider adapter and the nodes' logs; capacity held at "
              + held,
          previous.lastDecrease());
    }
    if (signals.staleInWindow() >= settings.staleAlertThreshold()) {
      // more workers would only expire more leases: look at the lease duration instead
      int held = Math.min(cap, settings.normalCap());
      return new Decision(
          Mode.ALERT_STALE,
          held,
          signals.staleInWindow()
              + " stale rejections or takeovers: inspect the lease duration and pauses; capacity"
              + " held at "
              + held,
          previous.lastDecrease());
    }
    if (deadlineAtRisk(settings, signals, signals.itemsPerSecond())) {
      // a deadline does not wait for additive increase: double, bounded by the burst cap
      int raised = Math.min(settings.burstCap(), Math.max(cap + 1, cap * 2));
      return new Decision(
          Mode.BURST,
          raised,
          "projected finish "
              + projectedFinish(signals)
              + " too close to the deadline "
              + signals.deadline()
              + ": concurrency "
              + cap
              + " -> "
              + raised,
          previous.lastDecrease());
    }
    if (cap > settings.normalCap()
        && deadlineAtRisk(
            settings, signals, signals.itemsPerSecond() * settings.normalCap() / cap)) {
      // the burst is what keeps the run on time: dropping to the normal cap would miss it again
      return new Decision(
          Mode.BURST,
          cap,
          "burst holds at "
              + cap
              + ": at the normal cap "
              + settings.normalCap()
              + " the projected finish would miss the deadline "
              + signals.deadline(),
          previous.lastDecrease());
    }
    int target = settings.normalCap();
    // back towards normal one step at a time, from below (after throttling) or from above (burst)
    int next = cap < target ? cap + 1 : cap > target ? cap - Math.max(1, (cap - target) / 2) : cap;
    String reason =
        next == previous.cap() && previous.mode() == Mode.NORMAL
            ? previous.reason()
            : "healthy: concurrency " + cap + " -> " + next + " (normal " + target + ")";
    return new Decision(Mode.NORMAL, next, reason, previous.lastDecrease());
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

package io.fencekeeper.worker;

import io.fencekeeper.CborSerializable;
import java.time.Duration;
import java.time.Instant;

/**
 * The latency-versus-cost governor as a pure function (design.md §3.3): from what a run observes to
 * how many provider calls it may have in flight across the whole cluster. More workers reduce
 * elapsed time only until the provider, the store or the retry queue becomes the limit, so:
 *
 * <table>
 *   <caption>decision table, first matching row wins</caption>
 *   <tr><th>signal</th><th>decision</th></tr>
 *   <tr><td>throttling (429 / Retry-After) seen in the last window</td>
 *       <td>THROTTLED: multiplicative decrease, at most once per cool-down</td></tr>
 *   <tr><td>stale claims or lease expiries above the threshold</td>
 *       <td>ALERT_STALE: raise an alert, never add capacity</td></tr>
 *   <tr><td>projected finish too close to the deadline</td>
 *       <td>BURST: additive increase up to the burst cap</td></tr>
 *   <tr><td>otherwise</td><td>NORMAL: additive increase back to the normal cap</td></tr>
 * </table>
 */
public final class GovernorPolicy {

  private GovernorPolicy() {}

  public enum Mode {
    NORMAL,
    BURST,
    THROTTLED,
    ALERT_STALE
  }

  /**
   * The operator's limits. {@code normalCap} is what a healthy run uses, {@code burstCap} the most
   * it may use to meet a deadline, {@code minCap} the floor of the decrease.
   */
  public record Settings(
      int normalCap,
      int burstCap,
      int minCap,
      double decreaseFactor,
      Duration decreaseCooldown,
      double deadlineMargin,
      int staleAlertThreshold)
      implements CborSerializable {

    public Settings {
      if (minCap < 1 || normalCap < minCap || burstCap < normalCap) {
        throw new IllegalArgumentException(
            "caps must satisfy 1 <= minCap <= normalCap <= burstCap, got min "
                + minCap
                + ", normal "
                + normalCap
                + ", burst "
                + burstCap);
      }
      if (burstCap > 10_000) {
        throw new IllegalArgumentException("burstCap must be at most 10000, got " + burstCap);
      }
      if (!(decreaseFactor > 0 && decreaseFactor < 1)) {
        throw new IllegalArgumentException(
            "decreaseFactor must be between 0 and 1, got " + decreaseFactor);
      }
    }

    public static Settings defaults() {
      return new Settings(16, 64, 1, 0.5, Duration.ofSeconds(1), 0.9, 3);
    }

    public Settings withCaps(int normal, int burst, int min) {
      return new Settings(
          normal,
          burst,
          min,
          decreaseFactor,
          decreaseCooldown,
          deadlineMargin,
          staleAlertThreshold);
    }
  }

  /**
   * What the run saw over the last window.
   *
   * @param throttledInWindow provider answers that were 429 / Retry-After since the last decision
   * @param staleInWindow attempts that lost their lease, and takeovers of expired leases
   */
  public record Signals(
      Instant now,
      Instant deadline,
      long remainingItems,
      double itemsPerSecond,
      double backlogAgeSeconds,
      long throttledInWindow,
      long staleInWindow) {}

  /** The cap now in force and why; {@code lastDecrease} paces the multiplicative decrease. */
  public record Decision(Mode mode, int cap, String reason, Instant lastDecrease)
      implements CborSerializable {

    public static Decision initial(Settings settings) {
      return new Decision(Mode.NORMAL, settings.normalCap(), "start at the normal cap", null);
    }
  }

  public static Decision decide(Settings settings, Decision previous, Signals signals) {
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
    if (signals.staleInWindow() >= settings.staleAlertThreshold()) {
      // more workers would only expire more leases: look at the lease duration instead
      int held = Math.min(cap, settings.normalCap());
      return new Decision(
          Mode.ALERT_STALE,
          held,
          signals.staleInWindow()
              + " stale claims or lease expiries: inspect the lease duration; capacity held at "
              + held,
          previous.lastDecrease());
    }
    if (deadlineAtRisk(settings, signals)) {
      int raised = Math.min(settings.burstCap(), cap + Math.max(1, settings.normalCap() / 4));
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
    int target = settings.normalCap();
    int next = cap < target ? cap + 1 : target;
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
  static boolean deadlineAtRisk(Settings settings, Signals signals) {
    if (signals.remainingItems() == 0 || !signals.now().isBefore(signals.deadline())) {
      return false;
    }
    long remainingMillis = Duration.between(signals.now(), signals.deadline()).toMillis();
    if (signals.itemsPerSecond() <= 0) {
      return signals.backlogAgeSeconds() * 1000 > remainingMillis * 0.1;
    }
    double neededMillis = signals.remainingItems() / signals.itemsPerSecond() * 1000;
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

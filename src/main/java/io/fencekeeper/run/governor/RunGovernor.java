package io.fencekeeper.run.governor;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;

/**
 * The governor of one run: the decision in force, the signals gathered since the last decision, and
 * the log of changes an operator reads. Deciding is {@link GovernorPolicy}'s; this class only keeps
 * the state between decisions, so the dispatcher that owns it stays a wiring of messages.
 */
public final class RunGovernor {

  /** How many changes the run view keeps. */
  static final int CHANGES_KEPT = 50;

  /**
   * How long a throttled answer keeps the run THROTTLED for the fleet ({@link FleetPolicy}): the
   * governor may burst again a second after the last 429, but an autoscaler that added nodes in
   * every lull between two bursts of 429s would only buy the provider more 429s.
   */
  public static final Duration FLEET_THROTTLED_FOR = Duration.ofMinutes(1);

  /** How long a quarantine keeps the governor from adding capacity. */
  static final Duration QUARANTINE_ALERT_FOR = Duration.ofMinutes(1);

  private GovernorSettings settings;
  private GovernorPolicy.Decision decision;
  private Instant lastDecisionAt;
  private long throttledInWindow;
  private Instant lastThrottledAt;
  private long staleInWindow;
  private final ArrayDeque<Instant> quarantinedAt = new ArrayDeque<>();
  private final ArrayDeque<GovernorView.Change> changes = new ArrayDeque<>();

  public RunGovernor(GovernorSettings settings, Instant now) {
    this.settings = settings;
    this.decision = GovernorPolicy.Decision.initial(settings);
    record(now);
  }

  /** How many of the run's items may be in flight across the cluster now. */
  public int cap() {
    return decision.cap();
  }

  public GovernorSettings settings() {
    return settings;
  }

  public GovernorPolicy.Decision decision() {
    return decision;
  }

  /** Throttled provider answers (429 / Retry-After) reported since the last decision. */
  public void throttled(long answers) {
    throttledInWindow += answers;
  }

  /** Commands refused as stale, and claims that took over an expired lease. */
  public void stale(long events) {
    staleInWindow += events;
  }

  /** An item of the run was quarantined: its holders vanished attempt after attempt. */
  public void quarantined(Instant now) {
    quarantinedAt.add(now);
  }

  /**
   * Decides at most once a second; the decision is returned when it is worth logging: a change of
   * mode, or a cap that moves outside NORMAL (the additive steps back to normal are not).
   */
  public Optional<GovernorPolicy.Decision> decide(
      Instant now, Instant deadline, long remaining, double itemsPerSecond, double backlogAge) {
    if (lastDecisionAt != null && now.isBefore(lastDecisionAt.plusSeconds(1))) {
      return Optional.empty();
    }
    lastDecisionAt = now;
    if (throttledInWindow > 0) {
      lastThrottledAt = now;
    }
    GovernorPolicy.Decision next =
        GovernorPolicy.decide(
            settings,
            decision,
            new GovernorPolicy.Signals(
                now,
                deadline,
                remaining,
                itemsPerSecond,
                backlogAge,
                throttledInWindow,
                staleInWindow,
                quarantinedSince(now.minus(QUARANTINE_ALERT_FOR))));
    throttledInWindow = 0;
    staleInWindow = 0;
    boolean worthLogging =
        next.mode() != decision.mode()
            || (next.cap() != decision.cap() && next.mode() != GovernorPolicy.Mode.NORMAL);
    decision = next;
    if (!worthLogging) {
      return Optional.empty();
    }
    record(now);
    return Optional.of(next);
  }

  /**
   * Whether the provider throttled the run within {@link #FLEET_THROTTLED_FOR} of {@code now}, as
   * the governor's decisions saw it: more nodes would not help it.
   */
  public boolean throttledLately(Instant now) {
    return lastThrottledAt != null && now.isBefore(lastThrottledAt.plus(FLEET_THROTTLED_FOR));
  }

  /** New limits from an operator: the cap in force is clamped into them at once. */
  public GovernorPolicy.Decision change(GovernorSettings next, Instant now) {
    settings = next;
    int cap = Math.max(next.minCap(), Math.min(decision.cap(), next.burstCap()));
    decision =
        new GovernorPolicy.Decision(
            decision.mode(), cap, "caps changed to " + capsOf(next), decision.lastDecrease());
    record(now);
    return decision;
  }

  public GovernorView view() {
    return new GovernorView(
        decision.mode(), decision.cap(), decision.reason(), List.copyOf(changes));
  }

  private void record(Instant now) {
    changes.add(new GovernorView.Change(now, decision.mode(), decision.cap(), decision.reason()));
    while (changes.size() > CHANGES_KEPT) {
      changes.pollFirst();
    }
  }

  private long quarantinedSince(Instant since) {
    while (!quarantinedAt.isEmpty() && quarantinedAt.peekFirst().isBefore(since)) {
      quarantinedAt.pollFirst();
    }
    return quarantinedAt.size();
  }

  private static String capsOf(GovernorSettings s) {
    return "normal " + s.normalCap() + ", burst " + s.burstCap() + ", min " + s.minCap();
  }
}

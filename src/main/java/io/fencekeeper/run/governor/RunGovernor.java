package io.fencekeeper.run.governor;

import io.fencekeeper.provider.budget.ThrottleShare;
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
   * How long a THROTTLED decision keeps the run THROTTLED for the fleet ({@link FleetPolicy}): the
   * governor may burst again a second after the provider stopped limiting it, but an autoscaler
   * that added nodes in every lull between two bursts of 429s would only buy the provider more
   * 429s. Only a share of throttled calls that says the provider limits the run counts ({@link
   * ThrottleShare}): the 429s of a provider's noise (1 % of calls at random) do not hold the fleet
   * THROTTLED.
   */
  public static final Duration FLEET_THROTTLED_FOR = Duration.ofMinutes(1);

  /** How long a quarantine keeps the governor from adding capacity. */
  static final Duration QUARANTINE_ALERT_FOR = Duration.ofMinutes(1);

  private GovernorSettings settings;
  private GovernorPolicy.Decision decision;
  private Instant lastDecisionAt;
  // the run's provider calls, as the nodes report them: this second's, and the last seconds'
  private ThrottleShare.Calls callsSinceDecision = ThrottleShare.Calls.NONE;
  private final ThrottleShare.Window calls = new ThrottleShare.Window();
  // the cap changed at the last decision: the calls reported until the next one were made partly
  // under the cap before (a node reports its calls once a second, after they end)
  private boolean settling;
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

  /**
   * Provider calls of the run that ended, as a node reports them once a second: how many, how many
   * were throttled (429 / Retry-After), and the largest Retry-After.
   */
  public void called(ThrottleShare.Calls reported) {
    callsSinceDecision = callsSinceDecision.plus(reported);
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
    long nanos = nanosOf(now);
    if (!settling) {
      calls.add(nanos, callsSinceDecision);
    }
    settling = false;
    callsSinceDecision = ThrottleShare.Calls.NONE;
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
                calls.sum(nanos),
                staleInWindow,
                quarantinedSince(now.minus(QUARANTINE_ALERT_FOR))));
    staleInWindow = 0;
    if (next.cap() != decision.cap()) {
      // what the change does is read afresh, from the second after it, not mixed with the calls
      // made before it: a step up into a provider's limit shows at once, not diluted by the
      // seconds below it, and a decrease is not taken again for the calls that caused it
      calls.clear();
      settling = true;
    }
    if (next.mode() == GovernorPolicy.Mode.THROTTLED) {
      lastThrottledAt = now;
    }
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
   * Whether the governor was THROTTLED within {@link #FLEET_THROTTLED_FOR} of {@code now}: the
   * provider limited the run, and more nodes would not help it.
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
            decision.mode(),
            cap,
            "caps changed to " + capsOf(next),
            decision.lastDecrease(),
            decision.waitUntil());
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

  /**
   * The window's clock is the coordinator's (the decisions' {@code now}): a clock stepped back
   * keeps the last seconds' calls a little longer, nothing worse.
   */
  private static long nanosOf(Instant now) {
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
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

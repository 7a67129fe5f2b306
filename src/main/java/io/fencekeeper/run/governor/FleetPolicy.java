package io.fencekeeper.run.governor;

import io.fencekeeper.CborSerializable;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * How many nodes the cluster wants, from the governor's own model (docs/cluster.md, "The fleet
 * follows the window"): a pure function, like {@link GovernorPolicy}, that an autoscaler reads
 * through the nodes-wanted signal. A run's completion rate per item in flight says how many items
 * it needs in flight to finish its backlog inside the time left (with the governor's deadline
 * margin as headroom); that is bounded by what more nodes can buy (the run's burst cap and the
 * provider's budget) and turned into nodes by the workers each node runs.
 *
 * <table>
 *   <caption>one run's need, first matching row wins</caption>
 *   <tr><th>the run</th><th>items in flight it needs</th><th>reason</th></tr>
 *   <tr><td>nothing left, or its deadline passed</td><td>0</td><td>IDLE</td></tr>
 *   <tr><td>the provider throttles it</td><td>what it has now: more nodes do not help</td>
 *       <td>THROTTLED</td></tr>
 *   <tr><td>no completion yet</td><td>what it has now</td><td>ON_TRACK</td></tr>
 *   <tr><td>needs more than it has</td><td>the need, at most the burst cap and budget</td>
 *       <td>AT_RISK</td></tr>
 *   <tr><td>otherwise</td><td>the need (fewer nodes may do)</td><td>ON_TRACK</td></tr>
 * </table>
 */
public final class FleetPolicy {

  private FleetPolicy() {}

  public enum Reason {
    /** A run's deadline is at risk with the items in flight it has: more nodes help. */
    AT_RISK,
    /** The provider throttles: more nodes would only be throttled more. */
    THROTTLED,
    /** Every run can finish in time with what the fleet wanted says. */
    ON_TRACK,
    /** Nothing to do: release down to the minimum. */
    IDLE
  }

  /**
   * The fleet's bounds: at least {@code minNodes} (a cluster keeps its majority and its
   * singletons), at most {@code maxNodes}; {@code margin} is the part of the time left a run should
   * need (the governor's deadline margin, 0.9 by default).
   */
  public record Settings(int minNodes, int maxNodes, int workersPerNode, double margin) {
    public Settings {
      if (minNodes < 1 || maxNodes < minNodes) {
        throw new IllegalArgumentException(
            "fleet nodes: 1 <= min <= max, got min " + minNodes + ", max " + maxNodes);
      }
      if (workersPerNode < 1) {
        throw new IllegalArgumentException("workers per node must be at least 1");
      }
      if (!(margin > 0 && margin <= 1)) {
        throw new IllegalArgumentException("margin must be in (0, 1], got " + margin);
      }
    }

    /** The same bounds with the workers the cluster's nodes report they run. */
    public Settings withWorkersPerNode(int workers) {
      return new Settings(minNodes, maxNodes, Math.max(1, workers), margin);
    }
  }

  /**
   * One run now: its backlog, its measured completion rate with the items it has in flight, what
   * bounds its calls (its burst cap; the provider's budget, 0 = none) and whether the provider
   * throttles it (its governor THROTTLED, or a throttled answer within the last minute: {@link
   * RunGovernor#FLEET_THROTTLED_FOR}).
   */
  public record RunLoad(
      String runId,
      Instant now,
      Instant deadline,
      long remainingItems,
      double itemsPerSecond,
      int inFlight,
      int burstCap,
      int providerMaxInFlight,
      boolean throttled) {}

  /** What one run needs in flight, and why (shown in the run view, sent between nodes). */
  public record Need(String runId, long inFlight, Reason reason, String detail)
      implements CborSerializable {}

  /** The signal: how many nodes, why, and each run's need behind it. */
  public record Wanted(int nodes, Reason reason, String detail, List<Need> needs)
      implements CborSerializable {}

  /** One run's need; {@code margin} as in {@link Settings}. */
  public static Need need(RunLoad run, double margin) {
    if (run.remainingItems() <= 0) {
      return new Need(run.runId(), 0, Reason.IDLE, "nothing left to do");
    }
    if (!run.now().isBefore(run.deadline())) {
      return new Need(run.runId(), 0, Reason.IDLE, "its deadline has passed");
    }
    int now = Math.max(0, run.inFlight());
    if (run.throttled()) {
      return new Need(
          run.runId(),
          now,
          Reason.THROTTLED,
          "the provider throttles it: more nodes would only be throttled more");
    }
    if (!(run.itemsPerSecond() > 0) || now == 0) {
      return new Need(run.runId(), now, Reason.ON_TRACK, "no completion rate yet");
    }
    // seconds first: a far deadline must not overflow a count of milliseconds
    double secondsLeft = Duration.between(run.now(), run.deadline()).getSeconds();
    double perItemInFlight = run.itemsPerSecond() / now;
    double neededRate = run.remainingItems() / Math.max(1, secondsLeft * margin);
    long ceiling =
        run.providerMaxInFlight() > 0
            ? Math.min(run.burstCap(), run.providerMaxInFlight())
            : run.burstCap();
    // a double beyond a long's range saturates on the cast: no overflow
    long needed = (long) Math.ceil(neededRate / perItemInFlight);
    if (needed > now) {
      long bounded = Math.min(needed, Math.max(ceiling, now));
      String bound =
          bounded < needed
              ? "; bounded by "
                  + (run.providerMaxInFlight() > 0 && run.providerMaxInFlight() < run.burstCap()
                      ? "the provider's budget"
                      : "the run's burst cap")
                  + " at "
                  + bounded
              : "";
      return new Need(
          run.runId(),
          bounded,
          Reason.AT_RISK,
          "needs " + items(needed) + " in flight to finish in time, has " + now + bound);
    }
    return new Need(
        run.runId(),
        needed,
        Reason.ON_TRACK,
        items(needed) + " in flight finish in time, has " + now);
  }

  /** The fleet for every run in flight together (their needs add up: they share the nodes). */
  public static Wanted wanted(Settings settings, List<RunLoad> runs) {
    return fromNeeds(settings, runs.stream().map(run -> need(run, settings.margin())).toList());
  }

  /** The fleet for runs whose needs are known already (each run's progress carries its own). */
  public static Wanted fromNeeds(Settings settings, List<Need> needs) {
    long inFlight = needs.stream().mapToLong(Need::inFlight).sum();
    long nodes = (inFlight + settings.workersPerNode() - 1) / settings.workersPerNode();
    int bounded = (int) Math.max(settings.minNodes(), Math.min(settings.maxNodes(), nodes));
    Reason reason = reasonOf(needs);
    String detail =
        switch (reason) {
          case IDLE -> "no run in flight: down to the minimum of " + settings.minNodes();
          case THROTTLED -> "the provider throttles: no more nodes help";
          case AT_RISK ->
              items(inFlight)
                  + " in flight needed at "
                  + settings.workersPerNode()
                  + " workers a node"
                  + (nodes > settings.maxNodes() ? ", capped at the maximum of " + bounded : "");
          case ON_TRACK -> "every run finishes in time with " + items(inFlight) + " in flight";
        };
    return new Wanted(bounded, reason, detail, needs);
  }

  private static String items(long n) {
    return n == 1 ? "1 item" : n + " items";
  }

  private static Reason reasonOf(List<Need> needs) {
    if (needs.stream().anyMatch(n -> n.reason() == Reason.AT_RISK)) {
      return Reason.AT_RISK;
    }
    if (needs.stream().anyMatch(n -> n.reason() == Reason.THROTTLED)) {
      return Reason.THROTTLED;
    }
    if (needs.stream().allMatch(n -> n.reason() == Reason.IDLE)) {
      return Reason.IDLE;
    }
    return Reason.ON_TRACK;
  }
}

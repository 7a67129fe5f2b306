package io.fencekeeper.provider.budget;

import io.fencekeeper.CborSerializable;
import java.time.Instant;
import java.util.List;

/**
 * One provider's budget as operators see it ({@code GET /api/providers}): the budget and where it
 * comes from, what is in force after throttling, who holds its permits, each run's share, the
 * throttled answers, and the recent decisions with their reasons.
 *
 * @param source {@code config} (the node's {@code fencekeeper.provider(s)}) or {@code operator}
 *     ({@code PUT /api/providers/{name}}, journaled)
 * @param recovering the keeper has just started (or the budget was just set on a provider without
 *     one) and hands out no permit beyond what each node reports holding, until every member has
 *     reported or a permit lease has passed
 * @param granted permits granted to nodes now
 * @param inFlight provider calls in flight, as the nodes last reported them
 */
public record BudgetView(
    String provider,
    int maxInFlight,
    int maxRate,
    String source,
    int effectiveInFlight,
    int effectiveRate,
    boolean recovering,
    int granted,
    int inFlight,
    List<Node> nodes,
    List<Run> runs,
    Throttling throttling,
    List<Change> changes)
    implements CborSerializable {

  /**
   * A node's worker pool: its grant (permits and calls a second), what it may still be using
   * ({@code holding}), and how long its lease has left unless it renews.
   */
  public record Node(
      String node,
      int granted,
      int rate,
      int holding,
      int inFlight,
      int demand,
      long leaseLeftMillis)
      implements CborSerializable {}

  /** A run calling the provider: what it asked for, whether it is in BURST, what it got. */
  public record Run(String runId, int demand, boolean burst, int share)
      implements CborSerializable {}

  /** Throttled answers (429 / Retry-After) reported by any caller. */
  public record Throttling(long lastMinute, long total, Instant lastAt, long lastRetryAfterMillis)
      implements CborSerializable {}

  /** One decision about the budget, newest last. */
  public record Change(Instant at, int effectiveInFlight, int effectiveRate, String reason)
      implements CborSerializable {}
}

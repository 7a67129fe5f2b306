package io.fencekeeper.run.governor;

import io.fencekeeper.CborSerializable;
import java.time.Instant;
import java.util.List;

/**
 * The fleet as the coordinator sees it at {@code at} (docs/cluster.md, "The fleet follows the
 * window"): the nodes that dispatch items now, the nodes wanted by {@link FleetPolicy} and why, the
 * bounds it was computed with, and each running run's need behind it.
 */
public record FleetView(
    Instant at,
    int nodes,
    int wanted,
    FleetPolicy.Reason reason,
    String detail,
    int minNodes,
    int maxNodes,
    int workersPerNode,
    List<FleetPolicy.Need> runs)
    implements CborSerializable {

  /** The signal computed from {@code settings}, with {@code nodes} dispatching now. */
  public static FleetView of(
      Instant at, int nodes, FleetPolicy.Settings settings, FleetPolicy.Wanted wanted) {
    return new FleetView(
        at,
        nodes,
        wanted.nodes(),
        wanted.reason(),
        wanted.detail(),
        settings.minNodes(),
        settings.maxNodes(),
        settings.workersPerNode(),
        wanted.needs());
  }
}

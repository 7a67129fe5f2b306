package io.fencekeeper.node;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The partition inequality of docs/cluster.md ("Timings"): after a partition, the side the
 * split-brain resolver keeps starts the other side's shards only after failure detection, the
 * resolver's decision and the removal margin; that must all fit inside one item lease, so the
 * downed side has stopped itself while the leases it granted still hold, and the new incarnation of
 * each item waits them out before anyone claims it again. With {@code lease-majority} the decision
 * also waits for the resolver's lease (the minority's head start, then one lease operation), and
 * that lease must outlive the decision window, or a winner that lost the API server right after
 * taking it could see the other side take it too.
 *
 * @param detection how long before a silent node is unreachable: heartbeat interval + acceptable
 *     heartbeat pause
 * @param stableAfter the resolver's {@code stable-after}: membership unchanged this long before it
 *     decides
 * @param leaseAcquisition lease-majority only: {@code acquire-lease-delay-for-minority} + the lease
 *     implementation's {@code lease-operation-timeout}; zero otherwise
 * @param removalMargin how long the survivors wait after downing before they start the downed
 *     node's shards: {@code pekko.cluster.down-removal-margin}, or stable-after when it is off
 * @param itemLease {@code fencekeeper.lease}
 * @param resolverLease lease-majority only: the lease implementation's {@code heartbeat-timeout},
 *     how long a holder that stopped renewing still holds it
 */
public record PartitionTimings(
    String strategy,
    Duration detection,
    Duration stableAfter,
    Duration leaseAcquisition,
    Duration removalMargin,
    Duration itemLease,
    Optional<Duration> resolverLease) {

  static final String LEASE_MAJORITY = "lease-majority";

  private static final String SBR = "pekko.cluster.split-brain-resolver";

  /** A single node (no seeds, no bootstrap) or a node without the resolver: nothing to check. */
  public static Optional<PartitionTimings> of(Config config) {
    boolean joinsOthers =
        !config.getString("fencekeeper.seed-nodes").isBlank()
            || config.getBoolean("fencekeeper.cluster-bootstrap");
    boolean resolver =
        config
            .getString("pekko.cluster.downing-provider-class")
            .equals("org.apache.pekko.cluster.sbr.SplitBrainResolverProvider");
    if (!joinsOthers || !resolver) {
      return Optional.empty();
    }
    String strategy = config.getString(SBR + ".active-strategy");
    Duration detection =
        config
            .getDuration("pekko.cluster.failure-detector.heartbeat-interval")
            .plus(config.getDuration("pekko.cluster.failure-detector.acceptable-heartbeat-pause"));
    Duration stableAfter = config.getDuration(SBR + ".stable-after");
    Duration removal = removalMargin(config, stableAfter);
    Duration acquisition = Duration.ZERO;
    Optional<Duration> resolverLease = Optional.empty();
    if (strategy.equals(LEASE_MAJORITY)) {
      Config lease = leaseImplementation(config);
      acquisition =
          config
              .getDuration(SBR + ".lease-majority.acquire-lease-delay-for-minority")
              .plus(lease.getDuration("lease-operation-timeout"));
      resolverLease = Optional.of(lease.getDuration("heartbeat-timeout"));
    }
    return Optional.of(
        new PartitionTimings(
            strategy,
            detection,
            stableAfter,
            acquisition,
            removal,
            config.getDuration("fencekeeper.lease"),
            resolverLease));
  }

  /**
   * Refuses a node whose timings break the inequality, naming the settings and what they add up to,
   * unless {@code fencekeeper.unsafe-partition-timings} says the operator means it (tests of a
   * patient failure detector).
   */
  static void check(Config config) {
    Optional<PartitionTimings> timings = of(config);
    if (timings.isEmpty() || config.getBoolean("fencekeeper.unsafe-partition-timings")) {
      return;
    }
    List<String> violations = timings.get().violations();
    if (!violations.isEmpty()) {
      throw new IllegalArgumentException(
          String.join("; ", violations)
              + " (docs/cluster.md, \"Timings, and why they are what they are\")");
    }
  }

  /** From a partition until the kept side starts the other side's shards, at the latest. */
  public Duration takeover() {
    return decision().plus(removalMargin);
  }

  /** From a partition until both sides have decided (and tried the resolver's lease). */
  public Duration decision() {
    return detection.plus(stableAfter).plus(leaseAcquisition);
  }

  /** What is wrong, each as a sentence naming the settings; empty when the timings hold. */
  public List<String> violations() {
    List<String> violations = new ArrayList<>();
    if (takeover().compareTo(itemLease) >= 0) {
      violations.add(
          "fencekeeper.lease ("
              + seconds(itemLease)
              + ", FENCEKEEPER_LEASE) must be longer than failure detection + split-brain decision"
              + " + removal margin ("
              + seconds(takeover())
              + " = "
              + terms()
              + "): lengthen the lease or shorten these");
    }
    if (resolverLease.isPresent() && resolverLease.get().compareTo(decision()) <= 0) {
      violations.add(
          "the resolver's lease (heartbeat-timeout of pekko.cluster.split-brain-resolver"
              + ".lease-majority.lease-implementation, "
              + seconds(resolverLease.get())
              + ") must outlive the decision ("
              + seconds(decision())
              + "): the side that took it must still hold it when the other side tries");
    }
    return violations;
  }

  private String terms() {
    String terms =
        "pekko.cluster.failure-detector.heartbeat-interval + acceptable-heartbeat-pause "
            + seconds(detection)
            + ", split-brain-resolver.stable-after "
            + seconds(stableAfter);
    if (strategy.equals(LEASE_MAJORITY)) {
      terms +=
          ", lease-majority.acquire-lease-delay-for-minority + lease-operation-timeout "
              + seconds(leaseAcquisition);
    }
    return terms
        + ", removal margin "
        + seconds(removalMargin)
        + " (pekko.cluster.down-removal-margin, or stable-after when off)";
  }

  private static Duration removalMargin(Config config, Duration stableAfter) {
    // "off" or a duration; the resolver uses stable-after unless a margin of its own is set
    String raw = config.getString("pekko.cluster.down-removal-margin");
    if (raw.equalsIgnoreCase("off")) {
      return stableAfter;
    }
    Duration margin = config.getDuration("pekko.cluster.down-removal-margin");
    return margin.isZero() ? stableAfter : margin;
  }

  /** The lease implementation's section, over Pekko's defaults for every lease. */
  private static Config leaseImplementation(Config config) {
    String path = config.getString(SBR + ".lease-majority.lease-implementation");
    if (path.isBlank() || !config.hasPath(path)) {
      throw new IllegalArgumentException(
          SBR
              + ".lease-majority.lease-implementation must name the lease's configuration"
              + " (e.g. pekko.coordination.lease.kubernetes)");
    }
    return config.getConfig(path).withFallback(config.getConfig("pekko.coordination.lease"));
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() / 1000.0 + " s";
  }
}

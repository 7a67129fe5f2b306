package io.fencekeeper.node;

import com.typesafe.config.Config;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.provider.factory.ProviderSettings;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.GovernorSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** The operator-facing settings of one node, read once from the resolved configuration. */
public record NodeSettings(
    Path dataDir,
    String dbUrl,
    String dbUser,
    String dbPassword,
    int dbMaxConnections,
    String httpHost,
    int httpPort,
    String apiToken,
    String apiReadToken,
    Config providerConfig,
    Duration lease,
    Duration maxLease,
    int quarantineAfterLosses,
    int workers,
    String hostShards,
    Duration maxRunLength,
    List<String> seedNodes,
    boolean clusterBootstrap,
    Duration joinTimeout,
    GovernorSettings governor,
    FleetPolicy.Settings fleet) {

  /** The provider this node's workers call ({@code fencekeeper.provider}). */
  public ProviderSettings provider() {
    return ProviderSettings.fromConfig(providerConfig);
  }

  /**
   * Whether this node, with {@code workers} workers, hosts item shards ({@code
   * fencekeeper.item.host-shards}): {@code on}, {@code off}, or {@code auto}: when it has workers,
   * or when it is a cluster of its own (no seed nodes, no Cluster Bootstrap), since then nobody
   * else could host its items.
   */
  public boolean hostsItems(int workers) {
    return switch (hostShards) {
      case "on" -> true;
      case "off" -> false;
      default -> workers > 0 || (seedNodes.isEmpty() && !clusterBootstrap);
    };
  }

  /** Where this node's journal lives. */
  public JournalDatabase journalDatabase() {
    return JournalDatabase.of(dataDir, dbUrl, dbUser, dbPassword, dbMaxConnections);
  }

  public static NodeSettings from(Config config) {
    Config fk = config.getConfig("fencekeeper");
    if (fk.getBoolean("cluster-bootstrap") && !fk.getString("seed-nodes").isBlank()) {
      throw new IllegalArgumentException(
          "FENCEKEEPER_SEED_NODES must be empty when fencekeeper.cluster-bootstrap is on"
              + " (conf/kubernetes.conf): Cluster Bootstrap's contact points decide whom to join");
    }
    GovernorSettings governor =
        GovernorSettings.defaults()
            .withCaps(
                fk.getInt("governor.normal-cap"),
                fk.getInt("governor.burst-cap"),
                fk.getInt("governor.min-cap"));
    return new NodeSettings(
        Path.of(fk.getString("data-dir")),
        fk.getString("db.url").trim(),
        fk.getString("db.user"),
        fk.getString("db.password"),
        fk.getInt("db.max-connections"),
        fk.getString("http.host"),
        fk.getInt("http.port"),
        fk.getString("http.api-token"),
        fk.getString("http.api-read-token"),
        fk.getConfig("provider"),
        fk.getDuration("lease"),
        fk.getDuration("item.max-lease"),
        fk.getInt("item.quarantine-after-losses"),
        fk.getInt("workers"),
        hostShards(fk.getString("item.host-shards")),
        fk.getDuration("max-run-length"),
        Arrays.stream(fk.getString("seed-nodes").split(","))
            .map(String::trim)
            .filter(s -> !s.isEmpty())
            .toList(),
        fk.getBoolean("cluster-bootstrap"),
        joinTimeout(fk),
        governor,
        fleet(fk, governor));
  }

  /**
   * The fleet's bounds ({@code fencekeeper.fleet}); this node's workers stand for a node's until
   * the nodes report theirs, and the governor's deadline margin is the fleet's headroom.
   */
  private static FleetPolicy.Settings fleet(Config fk, GovernorSettings governor) {
    int min = fk.getInt("fleet.min-nodes");
    int max = fk.getInt("fleet.max-nodes");
    if (min < 1 || max < min || max > MAX_FLEET_NODES) {
      throw new IllegalArgumentException(
          "fencekeeper.fleet needs 1 <= min-nodes <= max-nodes <= "
              + MAX_FLEET_NODES
              + ", got min-nodes "
              + min
              + ", max-nodes "
              + max);
    }
    return new FleetPolicy.Settings(
        min, max, Math.max(1, fk.getInt("workers")), governor.deadlineMargin());
  }

  /**
   * {@code fencekeeper.join-timeout}: how long serve waits to be an Up member, at least a second.
   */
  private static Duration joinTimeout(Config fk) {
    Duration timeout;
    try {
      timeout = fk.getDuration("join-timeout");
    } catch (com.typesafe.config.ConfigException e) {
      throw new IllegalArgumentException(
          "fencekeeper.join-timeout (FENCEKEEPER_JOIN_TIMEOUT) must be a duration such as 60s");
    }
    if (timeout.toSeconds() < 1) {
      throw new IllegalArgumentException(
          "fencekeeper.join-timeout (FENCEKEEPER_JOIN_TIMEOUT) must be at least 1s, got "
              + fk.getString("join-timeout"));
    }
    return timeout;
  }

  /** Far above any cluster a coordinator singleton steers, far below overflow. */
  static final int MAX_FLEET_NODES = 1_000;

  private static String hostShards(String value) {
    String v = value.trim().toLowerCase(java.util.Locale.ROOT);
    if (!v.equals("auto") && !v.equals("on") && !v.equals("off")) {
      throw new IllegalArgumentException(
          "fencekeeper.item.host-shards must be auto, on or off, got '" + value + "'");
    }
    return v;
  }
}

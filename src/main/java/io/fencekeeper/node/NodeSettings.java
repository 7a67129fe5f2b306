package io.fencekeeper.node;

import com.typesafe.config.Config;
import io.fencekeeper.worker.GovernorPolicy;
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
    String providerKind,
    String providerUrl,
    Duration lease,
    Duration maxLease,
    int workers,
    List<String> seedNodes,
    GovernorPolicy.Settings governor) {

  public static NodeSettings from(Config config) {
    Config fk = config.getConfig("fencekeeper");
    return new NodeSettings(
        Path.of(fk.getString("data-dir")),
        fk.getString("db.url").trim(),
        fk.getString("db.user"),
        fk.getString("db.password"),
        fk.getInt("db.max-connections"),
        fk.getString("http.host"),
        fk.getInt("http.port"),
        fk.getString("http.api-token"),
        fk.getString("provider.kind"),
        fk.getString("provider.url"),
        fk.getDuration("lease"),
        fk.getDuration("item.max-lease"),
        fk.getInt("workers"),
        Arrays.stream(fk.getString("seed-nodes").split(","))
            .map(String::trim)
            .filter(s -> !s.isEmpty())
            .toList(),
        GovernorPolicy.Settings.defaults()
            .withCaps(
                fk.getInt("governor.normal-cap"),
                fk.getInt("governor.burst-cap"),
                fk.getInt("governor.min-cap")));
  }
}

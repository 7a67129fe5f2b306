package io.fencekeeper.testing;

import io.fencekeeper.node.FencekeeperNode;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/** Starts real nodes for tests: real journal, real cluster (on loopback, free ports). */
public final class TestNodes {

  private TestNodes() {}

  public static Map<String, Object> overrides(TestDatabases.Target db, Path dataDir) {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("fencekeeper.db.url", db.url());
    overrides.put("fencekeeper.db.user", db.user());
    overrides.put("fencekeeper.db.password", db.password());
    overrides.put("fencekeeper.data-dir", dataDir.toString());
    overrides.put("fencekeeper.seed-nodes", "");
    overrides.put("pekko.remote.artery.canonical.port", 0);
    overrides.put("pekko.loglevel", "WARNING");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    // a node closed with an attempt blocked at a gated provider waits 4 s for it, not 12
    overrides.put("pekko.coordinated-shutdown.phases.before-service-unbind.timeout", "5s");
    return overrides;
  }

  public static FencekeeperNode start(TestDatabases.Target db, Path dataDir, Clock clock) {
    FencekeeperNode node =
        FencekeeperNode.start(FencekeeperNode.config(overrides(db, dataDir)), clock);
    try {
      return node.awaitUp(Duration.ofSeconds(30));
    } catch (TimeoutException e) {
      node.close();
      throw new IllegalStateException("test node did not come up", e);
    }
  }
}

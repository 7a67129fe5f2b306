package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.node.NodeSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The cluster profile, the local nodes' overrides and docker-compose.yml agree with what a node
 * reads: a variable set in the compose file that no node reads would be a setting that silently
 * does nothing.
 */
class ClusterProfileTest {

  static final Path ROOT = Path.of("").toAbsolutePath();
  static final Pattern READ_VARIABLE = Pattern.compile("\\$\\{\\??(FENCEKEEPER_[A-Z_]+)}");
  static final Pattern COMPOSE_VARIABLE = Pattern.compile("^\\s+(FENCEKEEPER_[A-Z_]+)\\s*:");

  static Set<String> variablesRead(Path conf) throws IOException {
    Set<String> names = new TreeSet<>();
    Matcher m = READ_VARIABLE.matcher(Files.readString(conf));
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  @Test
  void everyVariableTheComposeFileSetsIsOneTheNodeReads() throws IOException {
    Set<String> read = variablesRead(ROOT.resolve("conf/fencekeeper.conf"));
    read.addAll(variablesRead(ROOT.resolve("conf/cluster.conf")));
    Set<String> set = new TreeSet<>();
    for (String line : Files.readAllLines(ROOT.resolve("docker-compose.yml"))) {
      Matcher m = COMPOSE_VARIABLE.matcher(line);
      if (m.find()) {
        set.add(m.group(1));
      }
    }
    assertTrue(set.size() >= 8, "compose sets the node variables: " + set);
    Set<String> unread = new TreeSet<>(set);
    unread.removeAll(read);
    assertEquals(Set.of(), unread, "set by docker-compose.yml but read by no node");
    // the compose nodes join each other and share PostgreSQL only through these
    assertTrue(set.containsAll(Set.of("FENCEKEEPER_DB_URL", "FENCEKEEPER_SEED_NODES")), "" + set);
  }

  @Test
  void profilesReadNoVariableBeyondTheDocumentedOnes() throws IOException {
    Set<String> documented = variablesRead(ROOT.resolve("conf/fencekeeper.conf"));
    for (String file :
        new String[] {
          "cluster.conf", "kubernetes.conf", "node-1.conf", "node-2.conf", "node-3.conf"
        }) {
      Set<String> extra = new HashSet<>(variablesRead(ROOT.resolve("conf").resolve(file)));
      extra.removeAll(documented);
      assertEquals(Set.of(), extra, file + " reads variables fencekeeper.conf does not");
    }
  }

  @Test
  void clusterProfileRefusesToStartWithoutASharedJournal() {
    // resolved without the process environment, so the shell running the test cannot hide it
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () ->
                ConfigFactory.parseFile(ROOT.resolve("conf/cluster.conf").toFile())
                    .withFallback(ConfigFactory.parseResources(NodeConfig.BUNDLED))
                    .resolve(ConfigResolveOptions.defaults().setUseSystemEnvironment(false)));
    assertTrue(e.getMessage().contains("FENCEKEEPER_DB_URL"), e.getMessage());
  }

  @Test
  void threeLocalNodesHaveDistinctPortsTheSameSeedsAndKeepMajority() {
    Set<Integer> ports = new HashSet<>();
    for (int n = 1; n <= 3; n++) {
      Config config =
          NodeConfig.load(
              Optional.of(ROOT.resolve("conf/node-" + n + ".conf")),
              Map.of("FENCEKEEPER_DB_URL", "jdbc:h2:tcp://127.0.0.1:9092/fencekeeper"));
      NodeSettings settings = NodeSettings.from(config);
      assertEquals("jdbc:h2:tcp://127.0.0.1:9092/fencekeeper", settings.dbUrl());
      // every node lists all three, node 1 first: a restarted node 1 joins, never forms its own
      assertEquals(
          java.util.List.of(
              "pekko://fencekeeper@127.0.0.1:25521",
              "pekko://fencekeeper@127.0.0.1:25522",
              "pekko://fencekeeper@127.0.0.1:25523"),
          settings.seedNodes());
      assertTrue(ports.add(config.getInt("pekko.remote.artery.canonical.port")));
      assertTrue(ports.add(settings.httpPort()));
      assertTrue(ports.add(config.getInt("pekko.management.http.port")));
      assertEquals(
          "keep-majority", config.getString("pekko.cluster.split-brain-resolver.active-strategy"));
      assertFalse(config.getBoolean("pekko.cluster.sharding.remember-entities"));
      assertEquals(java.util.List.of("worker"), config.getStringList("pekko.cluster.roles"));
      assertTrue(config.getBoolean("pekko.management.http.route-providers-read-only"));
      // detection + decision + removal margin stays below the lease (docs/cluster.md)
      long margin =
          config.getDuration("pekko.cluster.failure-detector.acceptable-heartbeat-pause").toMillis()
              + 1000
              + 2
                  * config
                      .getDuration("pekko.cluster.split-brain-resolver.stable-after")
                      .toMillis();
      assertTrue(margin < settings.lease().toMillis(), "timings " + margin + " ms vs lease");
    }
    assertEquals(9, ports.size());
  }
}

package io.fencekeeper.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.Scope;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node that warms its own hot path before it takes work (docs/bench.md, "The first night"). A JVM
 * compiles an item's code only after it has run it thousands of times, so a fresh node's first
 * night ran at a third of its later rate and spent as much CPU compiling as working. Before {@code
 * serve} starts the real node, a throwaway node of the same code (its actor system, sharding, item
 * entities, dispatcher, worker pool, provider client, journal plugin and Jackson) runs a synthetic
 * run of {@code fencekeeper.warm-up.items} items on an in-memory H2 journal against the in-process
 * simulated provider, then stops; the JIT keeps what it compiled.
 *
 * <p>Nothing of the warm-up reaches the node's own world: its journal lives in memory and is
 * dropped, its only provider is the in-process sim on a loopback port, it forms a cluster of one on
 * a free loopback port (no seed nodes, no Cluster Bootstrap), and it has no schedules, no named
 * providers and no verification when the run ends. A warm-up that fails or overruns its time limit
 * is logged and the node starts anyway: it is an optimisation, never a condition.
 */
public final class NodeWarmUp {

  private static final Logger log = LoggerFactory.getLogger(NodeWarmUp.class);

  /** {@code fencekeeper.warm-up.items}: 0 skips the warm-up. */
  public static final String ITEMS_PATH = "fencekeeper.warm-up.items";

  /** The most items a warm-up may be asked for: minutes of CPU, far below any overflow. */
  static final int MAX_ITEMS = 1_000_000;

  /** A warm-up that takes longer than this is stopped, and the node starts anyway. */
  static final Duration TIME_LIMIT = Duration.ofMinutes(2);

  /** The synthetic run's name: {@code warm-up/2000-01-01}, in the throwaway journal only. */
  static final String JOB = "warm-up";

  static final LocalDate DATE = LocalDate.of(2000, 1, 1);

  /**
   * The synthetic run's deadline: far enough that its governor never bursts and the fleet never
   * reads it as at risk; {@link #TIME_LIMIT} is what bounds the warm-up.
   */
  static final Duration RELAXED_DEADLINE = Duration.ofDays(1);

  /** How a warm-up went. */
  public sealed interface Outcome {
    /** The synthetic run ended; {@code done} of {@code items} were done. */
    record Warmed(int items, long done, RunState state, Duration took) implements Outcome {}

    /** Not asked for ({@code fencekeeper.warm-up.items = 0}). */
    record Skipped() implements Outcome {}

    /** It failed or overran {@link #TIME_LIMIT}; the node starts cold. */
    record Failed(String reason, Duration took) implements Outcome {}

    /** The process is shutting down (SIGTERM during the warm-up): do not start the node. */
    record Stopped() implements Outcome {}
  }

  private NodeWarmUp() {}

  /**
   * The items a warm-up runs, from {@code fencekeeper.warm-up.items}.
   *
   * @throws IllegalArgumentException naming the setting when it is outside 0..{@link #MAX_ITEMS}
   */
  public static int items(Config config) {
    if (!config.hasPath(ITEMS_PATH)) {
      return 0;
    }
    long items;
    try {
      items = config.getLong(ITEMS_PATH);
    } catch (ConfigException.WrongType e) {
      items = -1;
    }
    if (items < 0 || items > MAX_ITEMS) {
      throw new IllegalArgumentException(
          ITEMS_PATH
              + " (FENCEKEEPER_WARM_UP_ITEMS) must be between 0 and "
              + MAX_ITEMS
              + ", got '"
              + config.getValue(ITEMS_PATH).unwrapped()
              + "'");
    }
    return (int) items;
  }

  /**
   * Runs a warm-up of {@code items} (from {@link #items}), on a throwaway node built from the same
   * configuration with the overrides of {@link #throwawayConfig}; {@code decorate} gives it the
   * same decorations as the real node (a metered gateway, an attempt listener), on objects of its
   * own.
   */
  public static Outcome run(
      Config nodeConfig, int items, UnaryOperator<FencekeeperNode.Builder> decorate) {
    // a node without workers never runs an item's path: nothing to warm
    if (items == 0 || nodeConfig.getInt("fencekeeper.workers") == 0) {
      return new Outcome.Skipped();
    }
    String database = "fencekeeper-warm-up-" + UUID.randomUUID();
    Config config = throwawayConfig(nodeConfig, database);
    long started = System.nanoTime();
    FencekeeperNode node = null;
    try {
      node = decorate.apply(FencekeeperNode.builder(config)).start();
      node.awaitUp(TIME_LIMIT);
      return runSynthetic(node, items, started);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Outcome.Stopped();
    } catch (Exception e) {
      if (jvmShuttingDown()) {
        // SIGTERM: the JVM's hook is running the throwaway's coordinated shutdown under it
        return new Outcome.Stopped();
      }
      // a message, not a trace: the node starts cold and says why once
      return new Outcome.Failed(String.valueOf(e.getMessage()), since(started));
    } finally {
      if (node != null) {
        node.close();
      }
      dropDatabase(config);
    }
  }

  private static Outcome runSynthetic(FencekeeperNode node, int items, long started)
      throws Exception {
    RunRequest request =
        new RunRequest(JOB, DATE, new Scope.Upload(), Instant.now().plus(RELAXED_DEADLINE), 5, 10);
    RunCoordinator.CreateReply reply =
        node.runs()
            .create(request, new ByteArrayInputStream(accounts(items)))
            .toCompletableFuture()
            .get(TIME_LIMIT.toSeconds(), TimeUnit.SECONDS);
    if (!(reply instanceof RunCoordinator.Created)) {
      return new Outcome.Failed("the synthetic run was not created: " + reply, since(started));
    }
    long deadline = started + TIME_LIMIT.toNanos();
    while (true) {
      if (jvmShuttingDown()) {
        return new Outcome.Stopped();
      }
      Optional<RunView> run =
          node.runs().get(request.runId()).toCompletableFuture().get(30, TimeUnit.SECONDS);
      if (run.isPresent() && run.get().state() != RunState.RUNNING) {
        return new Outcome.Warmed(
            items, run.get().counts().done(), run.get().state(), since(started));
      }
      if (System.nanoTime() > deadline) {
        return new Outcome.Failed(
            "not done within " + TIME_LIMIT.toSeconds() + " s", since(started));
      }
      // a product loop, not a test's: the run's end is read from its view, as the CLI does
      Thread.sleep(100);
    }
  }

  /**
   * The node's configuration made into a throwaway's: an in-memory journal, the in-process sim as
   * its only provider, a cluster of one on a free loopback port, nothing scheduled or verified, and
   * quiet. Everything else (workers, lease, governor, sharding, serialization) stays the node's, so
   * the code that runs is the code the node will run.
   */
  static Config throwawayConfig(Config nodeConfig, String database) {
    Map<String, Object> overrides =
        Map.ofEntries(
            Map.entry("fencekeeper.db.url", "jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1"),
            Map.entry("fencekeeper.db.user", "warm-up"),
            Map.entry("fencekeeper.db.password", ""),
            Map.entry("fencekeeper.provider.kind", "sim"),
            Map.entry("fencekeeper.provider.url", ""),
            Map.entry("fencekeeper.provider.max-in-flight", 0),
            Map.entry("fencekeeper.provider.max-rate", 0),
            Map.entry("fencekeeper.verify.when-run-ends", false),
            Map.entry("fencekeeper.seed-nodes", ""),
            Map.entry("fencekeeper.cluster-bootstrap", false),
            Map.entry("pekko.remote.artery.canonical.hostname", "127.0.0.1"),
            Map.entry("pekko.remote.artery.canonical.port", 0),
            Map.entry("pekko.remote.artery.bind.hostname", ""),
            Map.entry("pekko.remote.artery.bind.port", ""),
            Map.entry("pekko.coordinated-shutdown.exit-jvm", "off"),
            Map.entry("pekko.loglevel", "WARNING"));
    return ConfigFactory.parseMap(overrides)
        .withValue("fencekeeper.providers", ConfigValueFactory.fromMap(Map.of()))
        .withValue("fencekeeper.schedules", ConfigValueFactory.fromIterable(List.of()))
        .withFallback(nodeConfig.withoutPath("fencekeeper.providers"))
        .resolve();
  }

  /** A scope of {@code items} synthetic accounts, in the CSV an upload carries. */
  static byte[] accounts(int items) {
    StringBuilder csv = new StringBuilder(items * 24).append("accountId,cursor\n");
    for (int i = 0; i < items; i++) {
      csv.append("warm-up-").append(i).append(",c-").append(i % 7).append('\n');
    }
    return csv.toString().getBytes(StandardCharsets.US_ASCII);
  }

  /** DB_CLOSE_DELAY=-1 kept it through the pool's reconnects; now it goes, memory and all. */
  private static void dropDatabase(Config config) {
    String url = config.getString("fencekeeper.db.url");
    try (var connection = DriverManager.getConnection(url, "warm-up", "");
        var statement = connection.createStatement()) {
      statement.execute("SHUTDOWN");
    } catch (Exception e) {
      log.warn("the warm-up's in-memory journal was not dropped: {}", e.getMessage());
    }
  }

  /**
   * Whether the JVM has begun its shutdown (SIGTERM): it then takes no new hook, and a node started
   * now could not register its own coordinated shutdown.
   */
  public static boolean jvmShuttingDown() {
    Thread probe = new Thread(() -> {});
    try {
      Runtime.getRuntime().addShutdownHook(probe);
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException shutdownInProgress) {
      return true;
    }
  }

  private static Duration since(long started) {
    return Duration.ofNanos(System.nanoTime() - started);
  }
}

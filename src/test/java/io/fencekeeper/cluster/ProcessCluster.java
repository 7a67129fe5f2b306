package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.ProviderTestSupport;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.DatabaseLink;
import io.fencekeeper.testing.FreePorts;
import io.fencekeeper.testing.TestDatabases;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Three {@code serve} processes of this build, configured like production (the docs/design.md
 * "Configuration" environment variables over {@code conf/cluster.conf}, with the test timings in a
 * small layered file), a {@code sim-provider} process they all call, an embedded PostgreSQL
 * journal, and a client member in the test JVM (no role, no workers) that creates and watches runs.
 */
final class ProcessCluster implements AutoCloseable {

  /** One node process and what it needs to be found and checked. */
  record NodeProcess(
      int n, Process process, int remotePort, int managementPort, int httpPort, Path log) {
    String address() {
      return "pekko://fencekeeper@127.0.0.1:" + remotePort;
    }
  }

  /**
   * How node {@code n}'s process is started beyond the operator's environment: a command before
   * java (faketime, setpriv) and extra environment variables (a fault, or this node's own role,
   * e.g. no item shards).
   */
  record Launch(List<String> prefix, Map<String, String> env) {
    static final Launch PLAIN = new Launch(List.of(), Map.of());

    /** {@code launch} for node {@code n} alone (a restart of it too), the others plain. */
    static IntFunction<Launch> forNode(int n, Launch launch) {
      return node -> node == n ? launch : PLAIN;
    }

    /**
     * Nodes 1 and 2 host the item shards and have no workers; nodes 3 and up are workers without
     * item shards ({@code FENCEKEEPER_HOST_SHARDS}, docs/design.md "Dispatch on every node"). Every
     * lease is then held on another node than its item's entity, so a worker node that pauses
     * leaves leases that another worker node takes over while it sleeps. (A node that hosts shards
     * works their items itself, and those wait for it when it pauses: their entities sleep too.)
     */
    static IntFunction<Launch> shardNodesThenWorkerNodes() {
      Launch shards =
          new Launch(
              List.of(), Map.of("FENCEKEEPER_WORKERS", "0", "FENCEKEEPER_HOST_SHARDS", "on"));
      Launch workers = new Launch(List.of(), Map.of("FENCEKEEPER_HOST_SHARDS", "off"));
      return node -> node <= 2 ? shards : workers;
    }
  }

  final TestDatabases.Target db;
  final Path dir;
  final Process sim;
  final URI simUrl;

  /** The nodes' road to the database, which the test can cut; null when they go straight there. */
  final DatabaseLink databaseLink;

  final List<NodeProcess> nodes = new ArrayList<>();
  FencekeeperNode client;

  /** The node's main class and its arguments before {@code --config FILE}. */
  private final List<String> nodeMain;

  private final int workersPerNode;
  private final IntFunction<Launch> launches;
  private final Path confFile;
  private final Map<Integer, Integer> starts = new LinkedHashMap<>();

  private static final List<String> SERVE = List.of("io.fencekeeper.cli.Main", "serve");

  ProcessCluster(int workersPerNode, String... simFlags) throws Exception {
    this(SERVE, 3, workersPerNode, Map.of(), n -> Launch.PLAIN, false, simFlags);
  }

  /** {@code timings} override the test timings (HOCON paths), e.g. a slower failure detector. */
  ProcessCluster(int workersPerNode, Map<String, Object> timings, String... simFlags)
      throws Exception {
    this(SERVE, 3, workersPerNode, timings, n -> Launch.PLAIN, false, simFlags);
  }

  /** Nodes started by another main class, e.g. a test's {@code serve} with a fault built in. */
  ProcessCluster(List<String> nodeMain, int workersPerNode, String... simFlags) throws Exception {
    this(nodeMain, 3, workersPerNode, Map.of(), n -> Launch.PLAIN, false, simFlags);
  }

  ProcessCluster(int workersPerNode, IntFunction<Launch> launches, String... simFlags)
      throws Exception {
    this(SERVE, 3, workersPerNode, Map.of(), launches, false, simFlags);
  }

  /** {@code timings}: HOCON paths over the test timings, for every node. */
  ProcessCluster(
      int workersPerNode,
      Map<String, Object> timings,
      IntFunction<Launch> launches,
      String... simFlags)
      throws Exception {
    this(SERVE, 3, workersPerNode, timings, launches, false, simFlags);
  }

  /**
   * {@code linkDatabase}: the nodes reach the database through a {@link DatabaseLink} the test can
   * cut (the client member in the test JVM, and the test's own reads, go straight there).
   */
  ProcessCluster(
      int workersPerNode,
      Map<String, Object> timings,
      IntFunction<Launch> launches,
      boolean linkDatabase,
      String... simFlags)
      throws Exception {
    this(SERVE, 3, workersPerNode, timings, launches, linkDatabase, simFlags);
  }

  /**
   * {@code initialNodes} nodes (1 to 3) instead of three: a test that adds the others itself with
   * {@link #startNode(int, List)}, as an autoscaler does.
   */
  static ProcessCluster ofNodes(
      int initialNodes,
      int workersPerNode,
      Map<String, Object> timings,
      IntFunction<Launch> launches,
      String... simFlags)
      throws Exception {
    return new ProcessCluster(
        SERVE, initialNodes, workersPerNode, timings, launches, false, simFlags);
  }

  private ProcessCluster(
      List<String> nodeMain,
      int initialNodes,
      int workersPerNode,
      Map<String, Object> timings,
      IntFunction<Launch> launches,
      boolean linkDatabase,
      String... simFlags)
      throws Exception {
    this.nodeMain = nodeMain;
    this.workersPerNode = workersPerNode;
    this.launches = launches;
    db = TestDatabases.freshPostgres();
    databaseLink = linkDatabase ? new DatabaseLink(db.url()) : null;
    dir = Files.createTempDirectory("fencekeeper-processes");
    List<String> simCommand = new ArrayList<>(ChildJvm.command());
    simCommand.addAll(List.of("io.fencekeeper.cli.Main", "sim-provider", "--port", "0"));
    simCommand.addAll(List.of(simFlags));
    sim =
        new ProcessBuilder(simCommand)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("sim.log").toFile())
            .start();
    simUrl =
        URI.create(
            awaitLine(dir.resolve("sim.log"), Pattern.compile("listening on (http://\\S+)"), sim));
    confFile = dir.resolve("test-timings.conf");
    Map<String, Object> allTimings = new HashMap<>(ClusterFixture.testTimings());
    allTimings.putAll(timings);
    StringBuilder conf = new StringBuilder();
    conf.append("include file(\"").append(ClusterFixture.CLUSTER_CONF).append("\")\n");
    allTimings.forEach((k, v) -> conf.append(k).append(" = \"").append(v).append("\"\n"));
    Files.writeString(confFile, conf);

    try {
      NodeProcess first =
          startNode(1, FreePorts.next(), FreePorts.next(), FreePorts.next(), List.of());
      awaitReady(first);
      stampJournalRowsWithDatabaseTime();
      List<String> seeds = List.of(first.address());
      // one at a time: two JVMs warming up together starve each other's heartbeats on 2 cores
      for (int n = 2; n <= initialNodes; n++) {
        awaitReady(startNode(n, FreePorts.next(), FreePorts.next(), FreePorts.next(), seeds));
      }
      client =
          ClusterFixture.startNode(
              db, dir.resolve("client"), seeds, null, 0, clientTimings(timings));
    } catch (Exception | AssertionError e) {
      // try-with-resources never closes what failed to construct: stop what did start
      try {
        close();
      } catch (Exception | AssertionError suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /** Starts node {@code n} (a restarted node gets a new number) joining {@code seeds}. */
  NodeProcess startNode(int n, List<String> seeds) throws IOException {
    return startNode(n, FreePorts.next(), FreePorts.next(), FreePorts.next(), seeds);
  }

  /**
   * Every journal row also gets the database's clock when it is written ({@code db_time}): one
   * clock for all nodes, whatever their own clocks say. The journal inserts name their columns, so
   * an extra column with a default changes nothing for the nodes.
   */
  private void stampJournalRowsWithDatabaseTime() throws Exception {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement s = c.createStatement()) {
      s.execute(
          "ALTER TABLE event_journal ADD COLUMN IF NOT EXISTS db_time TIMESTAMPTZ"
              + " DEFAULT clock_timestamp()");
    }
  }

  /**
   * Starts node {@code n} again on the same ports, as a supervisor restarts a service: a new
   * incarnation that joins through the members still running (never through itself alone, which
   * would form a second cluster on the same journal).
   */
  NodeProcess restart(NodeProcess old) throws IOException {
    List<String> seeds =
        nodes.stream()
            .filter(node -> node != old && node.process().isAlive())
            .map(NodeProcess::address)
            .toList();
    NodeProcess fresh =
        startNode(old.n(), old.remotePort(), old.managementPort(), old.httpPort(), seeds);
    nodes.remove(fresh);
    nodes.set(nodes.indexOf(old), fresh);
    return fresh;
  }

  private NodeProcess startNode(int n, int remote, int management, int http, List<String> seeds)
      throws IOException {
    Launch launch = launches.apply(n);
    List<String> command = new ArrayList<>(launch.prefix());
    command.addAll(ChildJvm.command());
    command.addAll(nodeMain);
    command.addAll(List.of("--config", confFile.toString()));
    ProcessBuilder builder = new ProcessBuilder(command);
    int start = starts.merge(n, 1, Integer::sum);
    Path log = dir.resolve("node-" + n + (start == 1 ? "" : "-restart-" + (start - 1)) + ".log");
    builder.redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> env = builder.environment();
    // docs/design.md, "Configuration": the only way an operator configures a node
    env.put("FENCEKEEPER_DB_URL", databaseLink == null ? db.url() : databaseLink.url(db.url()));
    env.put("FENCEKEEPER_DB_USER", db.user());
    env.put("FENCEKEEPER_DB_PASSWORD", db.password());
    env.put("FENCEKEEPER_DATA_DIR", dir.resolve("node-" + n).toString());
    env.put("FENCEKEEPER_REMOTE_HOST", "127.0.0.1");
    env.put("FENCEKEEPER_REMOTE_PORT", String.valueOf(remote));
    env.put("FENCEKEEPER_HTTP_PORT", String.valueOf(http));
    env.put("FENCEKEEPER_MANAGEMENT_PORT", String.valueOf(management));
    env.put("FENCEKEEPER_SEED_NODES", String.join(",", seeds));
    env.put("FENCEKEEPER_PROVIDER", "http");
    env.put("FENCEKEEPER_PROVIDER_URL", simUrl.toString());
    env.put("FENCEKEEPER_LEASE", ClusterFixture.LEASE.toSeconds() + "s");
    env.put("FENCEKEEPER_WORKERS", String.valueOf(workersPerNode));
    env.put("FENCEKEEPER_LOG_LEVEL", "WARN");
    env.putAll(launch.env());
    NodeProcess node = new NodeProcess(n, builder.start(), remote, management, http, log);
    nodes.add(node);
    return node;
  }

  /**
   * SIGTERM to the node (coordinated shutdown: it leaves, hands its shards over and drains its
   * workers), then waits until its process has exited and the cluster has removed the member;
   * returns when the process exited.
   */
  Instant leave(NodeProcess node) throws InterruptedException {
    node.process().destroy();
    assertTrue(
        node.process().waitFor(90, TimeUnit.SECONDS),
        "node " + node.n() + " leaves: " + tail(node.log()));
    Instant exited = Instant.now();
    Await.until(
        Duration.ofSeconds(60),
        "node " + node.n() + " removed",
        () -> !isMember(node.address()),
        this::snapshot);
    return exited;
  }

  /** Management's /health/ready: this node is an Up member and its shard region registered. */
  void awaitReady(NodeProcess node) {
    HttpClient http = HttpClient.newHttpClient();
    URI ready = URI.create("http://127.0.0.1:" + node.managementPort() + "/health/ready");
    Await.until(
        Duration.ofSeconds(180), // a node warming up on two cores shared with other JVMs
        "node " + node.n() + " ready",
        () -> {
          if (!node.process().isAlive()) {
            throw new AssertionError("node " + node.n() + " exited: " + tail(node.log()));
          }
          try {
            return http.send(
                        HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.discarding())
                    .statusCode()
                == 200;
          } catch (Exception e) {
            return false;
          }
        });
  }

  boolean isMember(String address) {
    return ThreeNodeClusterTest.isMember(client, address);
  }

  /**
   * The client member's timings: the cluster's, with a failure detector of 20 s (unless the test
   * set its own). The client hosts no item, no singleton and no worker; it only watches. In a test
   * JVM starved at load 36 (CI), it marked all three nodes unreachable while they marked it, and
   * its resolver downed all three ("DownIndirectlyConnected"): the cluster under test was taken
   * down by its observer. A patient observer reports no unreachability of its own, so it never
   * makes such a decision; the nodes' detectors keep the test's timings. Its detection is past the
   * lease, which a node refuses unless told that this is meant.
   */
  private static Map<String, Object> clientTimings(Map<String, Object> timings) {
    Map<String, Object> client = new HashMap<>(timings);
    client.putIfAbsent("pekko.cluster.failure-detector.acceptable-heartbeat-pause", "20s");
    client.put("fencekeeper.unsafe-partition-timings", true);
    return client;
  }

  /**
   * What a test that timed out could see: the members as the in-test client node sees them (its own
   * status, every member's, the unreachable ones) and the end of every node's log.
   */
  String snapshot() {
    StringBuilder seen = new StringBuilder();
    var state = Cluster.get(client.system()).state();
    seen.append("client ")
        .append(Cluster.get(client.system()).selfMember().status())
        .append(", members ");
    state
        .getMembers()
        .forEach(m -> seen.append(m.address()).append('=').append(m.status()).append(' '));
    seen.append(", unreachable ");
    state.getUnreachable().forEach(m -> seen.append(m.address()).append(' '));
    for (NodeProcess node : nodes) {
      seen.append("\n--- node ")
          .append(node.n())
          .append(node.process().isAlive() ? " (alive)" : " (exited)")
          .append(", log tail:\n")
          .append(tail(node.log()));
    }
    return seen.toString();
  }

  /** GET /ledger of the sim process: applied effects per idempotency key. */
  Map<String, Integer> ledger() throws Exception {
    return ProviderTestSupport.effectsPerKey(simUrl);
  }

  /**
   * For every persistence id, the writers of its events in sequence order, runs collapsed: one
   * journal instance (one incarnation of one node) per run. A writer that comes back after another
   * wrote (A, B, A) means two live incarnations of one entity, a split brain.
   */
  Map<String, List<String>> interleavedWriters() throws Exception {
    Map<String, List<String>> runs = new LinkedHashMap<>();
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT persistence_id, writer FROM event_journal"
                    + " ORDER BY persistence_id, sequence_number")) {
      while (rs.next()) {
        List<String> writers = runs.computeIfAbsent(rs.getString(1), k -> new ArrayList<>());
        String writer = rs.getString(2);
        if (writers.isEmpty() || !writers.get(writers.size() - 1).equals(writer)) {
          writers.add(writer);
        }
      }
    }
    assertEquals(true, runs.size() > 0, "the journal has events");
    return runs.entrySet().stream()
        .filter(e -> e.getValue().stream().distinct().count() < e.getValue().size())
        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
  }

  /**
   * The first column of the first row {@code sql} answers on the journal's database, null when it
   * answers none; a timestamp as an Instant.
   */
  Object queryOne(String sql, Object... params) {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        Object value = rs.next() ? rs.getObject(1) : null;
        return value instanceof Timestamp t ? t.toInstant() : value;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  static void signal(Process process, String signal) throws Exception {
    Process kill =
        new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start();
    assertEquals(0, kill.waitFor(), "kill -" + signal);
  }

  static String awaitLine(Path log, Pattern pattern, Process process) {
    return awaitLineWithin(Duration.ofSeconds(60), log, pattern, process);
  }

  /** The first group of {@code pattern} once {@code log} has it; fails if the process exits. */
  static String awaitLineWithin(Duration timeout, Path log, Pattern pattern, Process process) {
    return Await.until(
        timeout,
        pattern + " in " + log,
        () -> {
          if (!process.isAlive()) {
            throw new AssertionError("process exited: " + tail(log));
          }
          try {
            Matcher m = pattern.matcher(Files.readString(log));
            return m.find() ? m.group(1) : null;
          } catch (IOException e) {
            return null;
          }
        },
        found -> found != null);
  }

  static String tail(Path log) {
    try {
      String text = Files.readString(log);
      return text.substring(Math.max(0, text.length() - 3000));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  @Override
  public void close() throws Exception {
    if (client != null) {
      client.system().terminate();
      client.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    for (NodeProcess node : nodes) {
      if (node.process().isAlive()) {
        // a paused node must run to hear its SIGTERM; a node that just exited makes kill fail
        new ProcessBuilder("kill", "-CONT", String.valueOf(node.process().pid())).start().waitFor();
        node.process().destroy(); // SIGTERM: coordinated shutdown
      }
    }
    for (NodeProcess node : nodes) {
      if (!node.process().waitFor(30, TimeUnit.SECONDS)) {
        node.process().destroyForcibly();
      }
    }
    sim.destroy();
    sim.waitFor(10, TimeUnit.SECONDS);
    if (databaseLink != null) {
      databaseLink.close();
    }
  }
}

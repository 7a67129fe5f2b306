package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.FreePorts;
import io.fencekeeper.testing.ProcessTest;
import io.fencekeeper.testing.TestDatabases;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three {@code serve} processes of conf/kubernetes.conf with no seed nodes, formed by Cluster
 * Bootstrap from contact points listed in configuration ({@code config} discovery standing in for
 * the Kubernetes API, which this machine has not): two of three wait, the third makes them one
 * cluster, and the node with the lowest address (the one that forms a cluster when nobody reports
 * one), restarted, joins the running cluster instead of forming a second one on the same journal.
 * Keep-majority stands in for the Kubernetes Lease. Formation and rejoin times are printed, not
 * asserted.
 */
@ProcessTest
class ClusterBootstrapProcessTest {

  private static final Path KUBERNETES_CONF = Path.of("conf/kubernetes.conf").toAbsolutePath();
  private static final Pattern TOO_FEW =
      Pattern.compile(
          "Discovered \\[3\\] contact points, confirmed \\[2\\], which is less than the required"
              + " \\[3\\]");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newHttpClient();
  private final Map<Integer, Process> latest = new TreeMap<>();
  private final List<Process> started = new ArrayList<>();

  /** One node: its ports (management ports ascending with n) and its latest process. */
  record Node(int n, int management, int remote, int api) {
    String address() {
      return "pekko://fencekeeper@127.0.0.1:" + remote;
    }
  }

  @Test
  void twoOfThreeWaitTheThirdFormsOneClusterAndARestartedNodeRejoinsIt(@TempDir Path dir)
      throws Exception {
    TestDatabases.Target db = TestDatabases.freshPostgres();
    List<Integer> managementPorts = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      managementPorts.add(FreePorts.next());
    }
    managementPorts.sort(Integer::compare); // node 1 has the lowest address: it would form
    List<Node> nodes = new ArrayList<>();
    for (int n = 1; n <= 3; n++) {
      nodes.add(new Node(n, managementPorts.get(n - 1), FreePorts.next(), FreePorts.next()));
    }
    Path conf = writeConf(dir, nodes);
    try {
      long firstStart = System.nanoTime();
      Process one = start(nodes.get(0), conf, db, dir, "node-1.log");
      Process two = start(nodes.get(1), conf, db, dir, "node-2.log");

      // both see 2 of the 3 contact points answer, below required-contact-point-nr: they keep
      // probing, well past the stable margin, and neither forms a cluster
      for (String log : List.of("node-1.log", "node-2.log")) {
        Process process = log.equals("node-1.log") ? one : two;
        Await.until(
            Duration.ofSeconds(180),
            "six rounds of 'confirmed [2] ... less than the required [3]' in " + log,
            () -> count(dir.resolve(log), TOO_FEW, process) >= 6);
      }
      for (Node node : nodes.subList(0, 2)) {
        String ready = readiness(node);
        assertTrue(ready.startsWith("5"), "node " + node.n() + " is not ready: " + ready);
        assertEquals(List.of(), upMembers(node), "node " + node.n() + " formed nothing");
      }

      long thirdStart = System.nanoTime();
      start(nodes.get(2), conf, db, dir, "node-3.log");
      for (Node node : nodes) {
        awaitUpMembers(node, nodes.stream().map(Node::address).sorted().toList());
      }
      double formed = seconds(thirdStart);
      double fromFirst = seconds(firstStart);
      Map<String, String> uids = memberUids(nodes.get(1));
      for (Node node : nodes) {
        assertEquals(uids, memberUids(node), "node " + node.n() + " sees the same cluster");
      }

      // the lowest address, restarted: it must join the two that run, not form alone
      Process first = latest.get(1);
      first.destroy(); // SIGTERM: it leaves the cluster
      assertTrue(first.waitFor(60, TimeUnit.SECONDS), "node 1 stops");
      Await.until(
          Duration.ofSeconds(60),
          "node 1 removed from node 2's view",
          () -> !upMembers(nodes.get(1)).contains(nodes.get(0).address()));
      long restart = System.nanoTime();
      start(nodes.get(0), conf, db, dir, "node-1-restart.log");
      for (Node node : nodes) {
        awaitUpMembers(node, nodes.stream().map(Node::address).sorted().toList());
      }
      double rejoined = seconds(restart);
      Map<String, String> after = memberUids(nodes.get(1));
      assertEquals(after, memberUids(nodes.get(0)), "the restarted node is in the same cluster");
      assertNotEquals(
          uids.get(nodes.get(0).address()),
          after.get(nodes.get(0).address()),
          "a new incarnation of node 1 joined");
      assertEquals(uids.get(nodes.get(1).address()), after.get(nodes.get(1).address()));
      assertEquals(uids.get(nodes.get(2).address()), after.get(nodes.get(2).address()));
      System.out.printf(
          "ClusterBootstrapProcessTest: 3 nodes Up %.1f s after the third started (%.1f s after"
              + " the first; stable-margin 2 s); the restarted lowest-address node Up in the"
              + " running cluster %.1f s after its start; load %s%n",
          formed, fromFirst, rejoined, Files.readString(Path.of("/proc/loadavg")).trim());
    } finally {
      for (Process process : started) {
        process.destroy();
      }
      for (Process process : started) {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      }
    }
  }

  /**
   * conf/kubernetes.conf, with the contact points in configuration instead of the Kubernetes API,
   * keep-majority instead of the Kubernetes Lease, and the tests' shorter timings.
   */
  private static Path writeConf(Path dir, List<Node> nodes) throws IOException {
    StringBuilder conf = new StringBuilder();
    conf.append("include file(\"").append(KUBERNETES_CONF).append("\")\n");
    Map<String, Object> timings = new TreeMap<>(ClusterFixture.testTimings());
    timings.remove("pekko.loglevel"); // bootstrap says at INFO why it waits
    timings.put("pekko.cluster.split-brain-resolver.active-strategy", "keep-majority");
    timings.put(
        "pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method", "config");
    timings.put(
        "pekko.management.cluster.bootstrap.contact-point-discovery.service-name",
        "fencekeeper-test");
    timings.put("pekko.management.cluster.bootstrap.contact-point-discovery.stable-margin", "2s");
    timings.forEach((k, v) -> conf.append(k).append(" = \"").append(v).append("\"\n"));
    conf.append("pekko.discovery.config.services.fencekeeper-test.endpoints = [\n");
    for (Node node : nodes) {
      conf.append("  { host = \"127.0.0.1\", port = ").append(node.management()).append(" }\n");
    }
    conf.append("]\n");
    Path file = dir.resolve("bootstrap-test.conf");
    Files.writeString(file, conf);
    Files.writeString(
        dir.resolve("logback.xml"),
        "<configuration><appender name=\"OUT\" class=\"ch.qos.logback.core.ConsoleAppender\">"
            + "<encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{24} %msg%n</pattern></encoder>"
            + "</appender><logger name=\"org.apache.pekko.management.cluster.bootstrap\""
            + " level=\"INFO\"/><logger name=\"io.fencekeeper\" level=\"INFO\"/>"
            + "<root level=\"WARN\"><appender-ref ref=\"OUT\"/></root></configuration>");
    return file;
  }

  private Process start(Node node, Path conf, TestDatabases.Target db, Path dir, String log)
      throws IOException {
    List<String> command = new ArrayList<>(ChildJvm.command());
    // bootstrap says at INFO why it waits; the tests' logback-test.xml shows only warnings
    command.add(1, "-Dlogback.configurationFile=" + dir.resolve("logback.xml"));
    command.addAll(List.of("io.fencekeeper.cli.Main", "serve", "--config", conf.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(log).toFile());
    Map<String, String> env = builder.environment();
    env.put("FENCEKEEPER_DB_URL", db.url());
    env.put("FENCEKEEPER_DB_USER", db.user());
    env.put("FENCEKEEPER_DB_PASSWORD", db.password());
    env.put("FENCEKEEPER_DATA_DIR", dir.resolve("node-" + node.n()).toString());
    env.put("FENCEKEEPER_REMOTE_PORT", String.valueOf(node.remote()));
    env.put("FENCEKEEPER_HTTP_PORT", String.valueOf(node.api()));
    env.put("FENCEKEEPER_MANAGEMENT_PORT", String.valueOf(node.management()));
    env.put("FENCEKEEPER_LEASE", ClusterFixture.LEASE.toSeconds() + "s");
    env.put("FENCEKEEPER_WORKERS", "2");
    Process process = builder.start();
    started.add(process);
    latest.put(node.n(), process);
    return process;
  }

  private void awaitUpMembers(Node node, List<String> addresses) {
    Await.until(
        Duration.ofSeconds(180),
        "node " + node.n() + " listing " + addresses + " Up",
        () -> answeredMembers(node).map(m -> List.copyOf(m.keySet())).orElse(null),
        addresses::equals);
  }

  /** /cluster/members of the node's management: the addresses of its Up members, sorted. */
  private List<String> upMembers(Node node) {
    return List.copyOf(memberUids(node).keySet());
  }

  /**
   * Up member address to its uid (an incarnation), as this node's management reports them, waited
   * for: a comparison with an answer that never came would check nothing.
   */
  private Map<String, String> memberUids(Node node) {
    return Await.until(
            Duration.ofSeconds(60),
            "node " + node.n() + "'s management answering /cluster/members",
            () -> answeredMembers(node),
            Optional::isPresent)
        .orElseThrow();
  }

  /** As {@link #memberUids}, or empty while the node does not answer (not listening yet). */
  private Optional<Map<String, String>> answeredMembers(Node node) {
    Map<String, String> uids = new TreeMap<>();
    try {
      HttpResponse<String> response = get(node, "/cluster/members");
      if (response.statusCode() != 200) {
        return Optional.empty();
      }
      for (JsonNode member : JSON.readTree(response.body()).path("members")) {
        if (member.path("status").asText().equals("Up")) {
          uids.put(member.path("node").asText(), member.path("nodeUid").asText());
        }
      }
    } catch (IOException e) {
      return Optional.empty();
    }
    return Optional.of(uids);
  }

  /** The status of /health/ready, and its body. */
  private String readiness(Node node) throws IOException {
    HttpResponse<String> response = get(node, "/health/ready");
    return response.statusCode() + " " + response.body();
  }

  private HttpResponse<String> get(Node node, String path) throws IOException {
    try {
      return http.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.management() + path))
              .timeout(Duration.ofSeconds(10)) // a node starting beside others answers slowly
              .build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  private static long count(Path log, Pattern pattern, Process process) {
    if (!process.isAlive()) {
      throw new AssertionError("exited: " + ProcessCluster.tail(log));
    }
    try {
      Matcher m = pattern.matcher(Files.readString(log));
      long found = 0;
      while (m.find()) {
        found++;
      }
      return found;
    } catch (IOException e) {
      return 0;
    }
  }

  private static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }
}

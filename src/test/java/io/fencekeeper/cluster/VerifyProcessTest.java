package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.DATE;
import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.ProcessTest;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 27's proof with real processes: three {@code serve} nodes and a {@code sim-provider}
 * process that is non-idempotent and sometimes applies a cleanup without answering. A run of 2,000
 * items ends, and {@code fencekeeper verify} (its own process) finds that everything agrees; the
 * sim then loses 3 effects and gets 2 written by someone else, and the next verification reports
 * exactly those 5, by kind; a third is started on the oldest node (the keeper's) and that node is
 * killed with kill -9 mid-way: the verification goes on from its checkpoint on the next oldest
 * node, finds the same 5, and no item was looked up more than twice (counted at the sim).
 */
@ProcessTest
class VerifyProcessTest {

  /**
   * Four of the verification's pages of 500 rows, so the resumed one goes on across pages; about 20
   * ambiguous attempts at the sim's 1% (none at all has odds of e^-18); the kill at a fifth, 400
   * checked, comes after at least one checkpoint with most of the rows still to check. The issue's
   * 5,000 proved nothing more and cost 30 s of runs and lookups.
   */
  static final int ITEMS = 2000;

  static final ObjectMapper JSON = new ObjectMapper();
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void aRunWithFaultsAgreesTamperedKeysAreFoundByKindAndAKilledVerifierResumes() throws Exception {
    long begun = System.nanoTime();
    try (ProcessCluster cluster =
        new ProcessCluster(
            8,
            "--non-idempotent",
            "--timeout-after-accept",
            "0.01",
            "--latency-ms",
            "2",
            "--seed",
            "27")) {
      double clusterSeconds = (System.nanoTime() - begun) / 1e9;
      String job = "verify-proof";
      List<AccountCursor> accounts = accounts(ITEMS);
      RunView created = createRun(cluster.client, job, accounts);
      RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(300));
      assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
      assertTrue(ended.reconciliations() > 0, "some attempts were ambiguous and reconciled");
      ProcessCluster.NodeProcess oldest = cluster.nodes.get(0);
      ProcessCluster.NodeProcess other = cluster.nodes.get(1);

      // 1. everything agrees
      long start = System.nanoTime();
      Cli agree = verifyCli(cluster, other, created.runId(), null);
      double agreeSeconds = (System.nanoTime() - start) / 1e9;
      assertEquals(0, agree.exit(), agree.output());
      assertTrue(agree.output().contains("AGREE: " + ITEMS + " checked"), agree.output());

      // 2. three effects lost, two written by someone else
      Map<String, ItemId> applied = new TreeMap<>();
      Map<String, ItemId> nothingToDo = new TreeMap<>();
      for (AccountCursor account : accounts.subList(0, 200)) {
        ItemId id = ItemId.of(job, DATE, account.accountId(), account.cursor());
        WorkItem.OutcomeKind kind = ClusterFixture.item(cluster.client, id).effectOutcome().kind();
        (kind == WorkItem.OutcomeKind.NOTHING_TO_DO ? nothingToDo : applied).put(id.value(), id);
      }
      List<ItemId> appliedItems = new ArrayList<>(applied.values());
      Map<String, String> expected = new TreeMap<>();
      for (ItemId lost : appliedItems.subList(0, 3)) {
        assertEquals(204, sim(cluster, "DELETE", lost).statusCode());
        expected.put(lost.value(), "MISSING");
      }
      ItemId overwritten = appliedItems.get(10);
      ItemId foreign = nothingToDo.values().iterator().next();
      assertEquals(201, sim(cluster, "POST", overwritten).statusCode());
      assertEquals(201, sim(cluster, "POST", foreign).statusCode());
      expected.put(overwritten.value(), "DIFFERENT");
      expected.put(foreign.value(), "UNEXPECTED_EFFECT");

      Path findings = cluster.dir.resolve("findings.csv");
      start = System.nanoTime();
      Cli disagree = verifyCli(cluster, other, created.runId(), findings);
      double disagreeSeconds = (System.nanoTime() - start) / 1e9;
      assertEquals(4, disagree.exit(), disagree.output());
      assertEquals(expected, byItem(Files.readAllLines(findings)));

      // 3. kill -9 of the verifying node mid-way
      Map<String, Long> before = lookups(cluster);
      setSimLatency(cluster, 20); // a verification long enough to be killed in the middle
      JsonNode third = post(oldest, "/api/runs/" + seg(created.runId()) + "/verify");
      int number = third.path("number").asInt();
      String path = "/api/runs/" + seg(created.runId()) + "/verifications/" + number;
      JsonNode midway =
          Await.until(
              Duration.ofSeconds(120),
              "a fifth of the items checked",
              () -> get(oldest, path),
              v -> v != null && v.path("checked").asLong() >= ITEMS / 5);
      assertEquals("RUNNING", midway.path("verdict").asText(), "killed mid-way, not after");
      long killedAt = System.nanoTime();
      oldest.process().destroyForcibly(); // SIGKILL: the keeper and its verification die with it
      oldest.process().waitFor(30, TimeUnit.SECONDS);
      setSimLatency(cluster, 0); // the kill landed mid-way: the rest need not be slow
      JsonNode resumed =
          Await.until(
              Duration.ofSeconds(180),
              "the verification to end on another node",
              () -> get(other, path),
              v -> v != null && !v.path("verdict").asText().equals("RUNNING"));
      double resumeSeconds = (System.nanoTime() - killedAt) / 1e9;

      assertEquals("DISCREPANCIES", resumed.path("verdict").asText(), resumed.toString());
      assertEquals(ITEMS, resumed.path("checked").asLong());
      assertEquals(5, resumed.path("discrepancies").asLong());
      assertEquals(3, resumed.path("tally").path("missing").asLong());
      assertEquals(1, resumed.path("tally").path("different").asLong());
      assertEquals(1, resumed.path("tally").path("unexpectedEffect").asLong());
      Map<String, Long> after = lookups(cluster);
      Map<Long, Integer> histogram = new TreeMap<>();
      for (AccountCursor account : accounts) {
        String key = ItemId.of(job, DATE, account.accountId(), account.cursor()).idempotencyKey();
        long n = after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
        histogram.merge(n, 1, Integer::sum);
      }
      System.out.printf(
          "VERIFY (3 serve nodes, %d items, sim non-idempotent + accept-then-timeout): cluster"
              + " up in %.1f s, run %.1f s (%d reconciliations), verify AGREE %.1f s, verify with 5"
              + " discrepancies %.1f s (each through the CLI process, JVM start included); killed"
              + " the verifying node at %d checked, ended %.1f s after the kill; lookups per key"
              + " across the kill (lookups: keys) %s; load average %s%n",
          ITEMS,
          clusterSeconds,
          Duration.between(ended.createdAt(), ended.endedAt()).toMillis() / 1000.0,
          ended.reconciliations(),
          agreeSeconds,
          disagreeSeconds,
          midway.path("checked").asLong(),
          resumeSeconds,
          histogram,
          String.join(
              " ", List.of(Files.readString(Path.of("/proc/loadavg")).split(" ")).subList(0, 3)));
      assertEquals(0, histogram.getOrDefault(0L, 0), "every item was looked up: " + histogram);
      assertTrue(
          histogram.keySet().stream().allMatch(n -> n <= 2),
          "no item looked up more than twice: " + histogram);
      assertTrue(
          histogram.getOrDefault(1L, 0) >= midway.path("checked").asLong(),
          "the checkpointed items were not looked up again: " + histogram);
    }
  }

  record Cli(int exit, String output) {}

  /** {@code fencekeeper verify RUN} as its own process against {@code node}'s API. */
  static Cli verifyCli(
      ProcessCluster cluster, ProcessCluster.NodeProcess node, String runId, Path output)
      throws Exception {
    List<String> command = new ArrayList<>(ChildJvm.command());
    command.addAll(
        List.of(
            "io.fencekeeper.cli.Main",
            "verify",
            runId,
            "--url",
            "http://127.0.0.1:" + node.httpPort()));
    if (output != null) {
      command.addAll(List.of("-o", output.toString()));
    }
    Path log = Files.createTempFile(cluster.dir, "verify-cli", ".log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(300, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("verify did not end: " + Files.readString(log));
    }
    return new Cli(process.exitValue(), Files.readString(log));
  }

  /** itemId → outcome of a findings CSV. */
  static Map<String, String> byItem(List<String> csv) {
    Map<String, String> found = new TreeMap<>();
    for (String line : csv.subList(1, csv.size())) {
      String[] columns = line.split(",", -1);
      found.put(columns[0], columns[2]);
    }
    return found;
  }

  static HttpResponse<String> sim(ProcessCluster cluster, String method, ItemId item)
      throws Exception {
    URI uri =
        cluster.simUrl.resolve(
            "admin/effects/" + URLEncoder.encode(item.idempotencyKey(), StandardCharsets.UTF_8));
    return HTTP.send(
        HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static Map<String, Long> lookups(ProcessCluster cluster) throws Exception {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(cluster.simUrl.resolve("admin/lookups")).build(),
            HttpResponse.BodyHandlers.ofString());
    Map<String, Long> counts = new HashMap<>();
    JSON.readTree(response.body())
        .path("lookups")
        .fields()
        .forEachRemaining(e -> counts.put(e.getKey(), e.getValue().asLong()));
    return counts;
  }

  /** The sim's faults as they were started, with {@code latencyMs} added to every request. */
  static void setSimLatency(ProcessCluster cluster, long latencyMs) throws Exception {
    setSimFaults(cluster, Map.of("latencyMs", latencyMs));
  }

  /**
   * PUT /admin/faults: the sim's faults as they are, with {@code changes} over them (the field
   * names of {@code SimFaults}, e.g. latencyMs, throttlePerSecond).
   */
  static void setSimFaults(ProcessCluster cluster, Map<String, ?> changes) throws Exception {
    URI faults = cluster.simUrl.resolve("admin/faults");
    JsonNode current =
        JSON.readTree(
            HTTP.send(HttpRequest.newBuilder(faults).build(), HttpResponse.BodyHandlers.ofString())
                .body());
    changes.forEach(
        (field, value) ->
            ((com.fasterxml.jackson.databind.node.ObjectNode) current)
                .set(field, JSON.valueToTree(value)));
    HttpResponse<String> set =
        HTTP.send(
            HttpRequest.newBuilder(faults)
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(current.toString()))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, set.statusCode(), set.body());
  }

  static JsonNode post(ProcessCluster.NodeProcess node, String path) throws Exception {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(202, response.statusCode(), response.body());
    return JSON.readTree(response.body());
  }

  /** The verification as {@code node} answers it; null while it cannot (the keeper moving). */
  static JsonNode get(ProcessCluster.NodeProcess node, String path) {
    try {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? JSON.readTree(response.body()) : null;
    } catch (Exception unanswered) {
      return null;
    }
  }

  static String seg(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }
}

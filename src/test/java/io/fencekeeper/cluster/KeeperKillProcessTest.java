package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.NodeCrashProcessTest.seconds;
import static io.fencekeeper.cluster.VerifyProcessTest.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.archive.ArchiveManifest;
import io.fencekeeper.archive.ArchiveReader;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ProcessTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 36, parts 0 and 3: the oldest node, host of the run coordinator and of the budget,
 * retention and verification keepers, killed with kill -9 while all four are busy, on three {@code
 * serve} processes at the test cluster's default timings with one archive directory (the docs'
 * shared volume). Two runs end first, one to prune and one to verify (a verification reads the rows
 * a prune deletes, and nothing orders the two). Then the provider gets a budget of 6 calls at once
 * ({@code PUT /api/providers/default}), the verification is asked for, run B starts, and once it is
 * under way a prune of the first run ({@code POST /api/archive/prune}, ended before just after its
 * end: no other run is due). The oldest node is frozen (SIGSTOP) when the prune is half-way through
 * its deletes and its workers hold leases of run B, and killed. Run B must succeed with everything
 * a fault test asserts; the next oldest node's keepers must finish the prune (every row deleted
 * once, the archive as it was at the kill) and the verification (AGREE, no key looked up more than
 * twice); and the sim must never have had more than 6 calls in flight, the keeper's move included.
 *
 * <p>Timings: the sim answers at once for the first runs, and in 100 ms from the budget on, so that
 * run B (6 calls at once) is in flight for half a minute around the kill, and the verification,
 * whose lookups get only permits no worker waits for, is still going (it checks an eighth of its
 * items before run B starts, while it has the budget to itself). The first runs are made under a
 * budget of 3: resetting the sim would clear the ledger the verification compares against, so its
 * peak counts from its start, and a peak above 3 is run B's. Retention deletes 2 items' rows a
 * transaction, so that the freeze finds the deletes half-way, and looks every second whether a pass
 * is due, so that the next keeper goes on with the interrupted one a second after it starts.
 */
@ProcessTest
class KeeperKillProcessTest {

  static final int PRUNED_ITEMS = 400;
  static final int VERIFIED_ITEMS = 400;
  static final int RUN_ITEMS = 800;
  static final int BUDGET = 6;
  static final int EARLY_BUDGET = 3;
  static final int DELETE_BATCH = 2;
  static final String JOB = "budgeted";
  static final ObjectMapper JSON = ApiJson.mapper();
  static final HttpClient HTTP = HttpClient.newHttpClient();

  /** What was under way when node 1 was frozen for good, at {@code at}. */
  record Frozen(Instant at, Map<String, String> held, long staged, long checked, long done) {}

  @Test
  void theOldestNodeKilledMidPruneMidVerificationAndMidRunHandsEveryKeeperOnWithinTheBudget()
      throws Exception {
    long begun = System.nanoTime();
    Path archiveDir = Files.createTempDirectory("fk-keeper-kill-archive");
    Map<String, Object> retention =
        Map.of(
            "fencekeeper.retention.batch-size",
            DELETE_BATCH,
            "fencekeeper.retention.check-interval",
            "1s");
    ProcessCluster.Launch sharedArchive =
        new ProcessCluster.Launch(
            List.of(), Map.of("FENCEKEEPER_RETENTION_ARCHIVE_DIR", archiveDir.toString()));
    try (ProcessCluster cluster =
        new ProcessCluster(8, retention, n -> sharedArchive, "--seed", "36")) {
      double clusterUp = (System.nanoTime() - begun) / 1e9;
      ProcessCluster.NodeProcess oldest = cluster.nodes.get(0);
      ProcessCluster.NodeProcess survivor = cluster.nodes.get(1);
      putBudget(oldest, EARLY_BUDGET);
      RunView toPrune = endedRun(cluster, "prune-me", PRUNED_ITEMS);
      PrunedRun pruned = PrunedRun.before(cluster, toPrune.runId(), PRUNED_ITEMS);
      RunView toVerify = endedRun(cluster, "verify-me", VERIFIED_ITEMS);
      int earlyPeak = simPeak(cluster);
      double firstRuns = (System.nanoTime() - begun) / 1e9 - clusterUp;

      VerifyProcessTest.setSimLatency(cluster, 100);
      putBudget(oldest, BUDGET);
      String runPath = "/api/runs/" + seg(toVerify.runId());
      int number = VerifyProcessTest.post(oldest, runPath + "/verify").path("number").asInt();
      String verification = runPath + "/verifications/" + number;
      // an eighth checked while it has the budget to itself; run B leaves it little from then on
      Await.until(
          Duration.ofSeconds(120),
          "the verification under way",
          () -> VerifyProcessTest.get(oldest, verification),
          v -> v != null && v.path("checked").asLong() >= VERIFIED_ITEMS / 8);
      List<AccountCursor> accounts = accounts(RUN_ITEMS);
      RunView run = createRun(cluster.client, JOB, accounts);
      // five seconds and more of run B before the prune, so before the kill
      awaitDone(cluster.client, run.runId(), 100, Duration.ofSeconds(120), "run B under way");
      String cutoff = toPrune.endedAt().plusMillis(1).toString(); // no other run is due
      var prune =
          send(oldest, "POST", "/api/archive/prune", "{\"endedBefore\":\"" + cutoff + "\"}");
      assertEquals(202, prune.statusCode(), prune.body());
      Frozen frozen =
          Await.until(
              Duration.ofSeconds(120),
              "node 1 frozen half-way through the prune's deletes, holding leases of run B",
              () -> freezeMidway(cluster, oldest, pruned, verification, run.runId()),
              f -> f != null);
      ArchiveReader reader = new ArchiveReader(archiveDir, JSON);
      ArchiveManifest atKill = reader.manifest(pruned.runId()).orElseThrow();
      // frozen, it did nothing more: the freeze is the moment of death the figures count from
      ProcessCluster.signal(oldest.process(), "KILL");
      assertTrue(oldest.process().waitFor(30, TimeUnit.SECONDS));

      // when each keeper first answers on node 2 again, while run B goes on
      Map<String, String> keepers = new LinkedHashMap<>();
      keepers.put("coordinator", "/api/runs/" + seg(run.runId()));
      keepers.put("budget", "/api/providers");
      keepers.put("verification", verification);
      Map<String, Instant> answered = new ConcurrentHashMap<>();
      RunView ended =
          Await.until(
              Duration.ofSeconds(240),
              "run B to end and every keeper to answer on node 2",
              () -> firstAnswers(survivor, keepers, answered) ? endedView(cluster, run) : null,
              view -> view != null);
      VerifyProcessTest.setSimLatency(cluster, 0); // the verification's rest need not be slow
      JsonNode verified =
          Await.until(
              Duration.ofSeconds(180),
              "the verification to end on node 2",
              () -> VerifyProcessTest.get(survivor, verification),
              v -> v != null && !v.path("verdict").asText().equals("RUNNING"));
      Instant agreed = Instant.now();
      Instant prunedAt =
          Await.until(
              Duration.ofSeconds(120),
              "the prune finished on node 2",
              () -> pruned.prunedAt(cluster),
              at -> at != null);

      FaultOutcome.JournalCounts counts =
          FaultOutcome.assertHeld(cluster, survivor, ended, RunState.SUCCEEDED, JOB, accounts);
      assertEquals(Map.of(), cluster.interleavedWriters(), "A, B, A writers per persistence id");
      int peak = simPeak(cluster);
      assertTrue(peak <= BUDGET, "peak in flight at the sim " + peak + ", budget " + BUDGET);

      // the prune: every row deleted once, the archive as it was at the kill, the rest by node 2
      pruned.assertPrunedOnce(cluster, reader, atKill);
      long deletedOnNode2 = metric(survivor, "fencekeeper_retention_rows_deleted_total");
      assertTrue(deletedOnNode2 > 0, "node 2's keeper deleted the rest");

      // the verification: resumed after its last checkpoint, everything agrees
      assertEquals("AGREE", verified.path("verdict").asText(), verified.toString());
      assertEquals(VERIFIED_ITEMS, verified.path("checked").asLong());
      Map<Long, Integer> lookups = lookupsPerKey(cluster, toVerify);
      assertTrue(lookups.keySet().stream().allMatch(n -> n == 1 || n == 2), "lookups " + lookups);
      assertTrue(
          lookups.getOrDefault(1L, 0) >= frozen.checked(),
          "the items checked before the kill were not looked up again: " + lookups);

      JournalTimeline journal = JournalTimeline.read(cluster, JOB);
      var timeline = NodeCrashProcessTest.Timeline.read(journal, oldest.address());
      Instant killed = frozen.at();
      Map<String, Object> figures = new LinkedHashMap<>();
      figures.put("cluster up s", Math.round(clusterUp));
      figures.put("first runs s", Math.round(firstRuns));
      figures.put("sim peak in the first runs (budget " + EARLY_BUDGET + ")", earlyPeak);
      figures.put(
          "at the kill: items staged in the prune, verified, run B done, leases held",
          List.of(frozen.staged(), frozen.checked(), frozen.done(), frozen.held().size()));
      List<String> takeovers = new ArrayList<>();
      frozen
          .held()
          .forEach((item, holder) -> takeovers.add(takeover(journal, item, holder, killed)));
      figures.put("each held lease's end and takeover from the kill (lease 10 s)", takeovers);
      figures.put("the node's leases claimed again", timeline.takeoversOfVictim());
      figures.put("the last s", seconds(killed, timeline.lastTakeoverOfVictim()));
      figures.put(
          "completions/s 5 s before, 0-5 s after, 5-10 s, 10-20 s",
          List.of(
              timeline.rate(killed.minusSeconds(5), killed),
              timeline.rate(killed, killed.plusSeconds(5)),
              timeline.rate(killed.plusSeconds(5), killed.plusSeconds(10)),
              timeline.rate(killed.plusSeconds(10), killed.plusSeconds(20))));
      keepers
          .keySet()
          .forEach(k -> figures.put(k + " answers on node 2 s", seconds(killed, answered.get(k))));
      figures.put("budget recovery over s", budgetRecoveries(survivor, killed));
      Object checkpoint =
          cluster.queryOne(
              "SELECT min(db_time) FROM event_journal WHERE persistence_id = ? AND db_time > ?",
              "Verification|" + toVerify.runId() + "#" + number,
              Timestamp.from(killed));
      figures.put("verification's next checkpoint s", seconds(killed, (Instant) checkpoint));
      figures.put("AGREE s", seconds(killed, agreed));
      figures.put("prune done s", seconds(killed, prunedAt));
      figures.put("rows deleted on node 2", deletedOnNode2 + "/" + pruned.rows());
      figures.put("run B ended s", seconds(killed, ended.endedAt()));
      figures.put(
          "takeovers, stale rejections", List.of(counts.takeovers(), counts.staleRejections()));
      figures.put("sim peak in flight (budget " + BUDGET + ")", peak);
      figures.put("lookups per verified key", lookups);
      figures.put("load", Files.readString(Path.of("/proc/loadavg")).trim());
      System.out.println(
          "KEEPER KILL (3 serve nodes of 8 workers, kill -9 of the oldest, sim 100 ms) " + figures);
      assertTrue(
          seconds(killed, timeline.lastTakeoverOfVictim()) < 60,
          "a takeover that waited for something other than the lease");
    }
  }

  /**
   * Once the prune has archived its run, freezes {@code node} and answers what it froze if the
   * deletes are half-way (more than two batches left: one the node sent before it froze may still
   * commit) and its workers hold leases of run B; otherwise lets it go on and answers null. The
   * verification is read just before: still running.
   */
  private static Frozen freezeMidway(
      ProcessCluster cluster,
      ProcessCluster.NodeProcess node,
      PrunedRun pruned,
      String verification,
      String runId) {
    try {
      assertEquals(null, pruned.prunedAt(cluster), "the prune ended before node 1 was frozen");
      JsonNode checking = VerifyProcessTest.get(node, verification);
      if (!pruned.deleting(cluster) || checking == null) {
        return null;
      }
      assertEquals("RUNNING", checking.path("verdict").asText(), "verification " + checking);
      long done =
          ClusterFixture.view(cluster.client, runId).map(v -> v.counts().done()).orElse(-1L);
      Instant at = Instant.now();
      ProcessCluster.signal(node.process(), "STOP");
      long staged = pruned.staged(cluster);
      if (staged > 2 * DELETE_BATCH && staged < PRUNED_ITEMS) {
        Map<String, String> held = StopWhileHolding.heldWhileStopped(cluster, JOB, node.address());
        if (!held.isEmpty()) {
          return new Frozen(at, held, staged, checking.path("checked").asLong(), done);
        }
      }
      ProcessCluster.signal(node.process(), "CONT");
      return null;
    } catch (AssertionError e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** When the lease {@code holder} held at the kill ended and when it was taken over. */
  private static String takeover(
      JournalTimeline journal, String item, String holder, Instant killed) {
    assertTrue(
        journal.takenOver(item, holder),
        "the lease of " + holder + " on " + item + " at the kill was taken over");
    return NodeCrashProcessTest.takeoverAfterExpiry(journal, item, holder, killed);
  }

  /**
   * Asks each keeper not heard from yet (at once, 1 s each) and notes when it first answered; true
   * once every one has.
   */
  private static boolean firstAnswers(
      ProcessCluster.NodeProcess node, Map<String, String> keepers, Map<String, Instant> seen) {
    List<CompletableFuture<?>> asks = new ArrayList<>();
    keepers.forEach(
        (keeper, path) -> {
          if (!seen.containsKey(keeper)) {
            HttpRequest get =
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                    .timeout(Duration.ofSeconds(1))
                    .build();
            asks.add(
                HTTP.sendAsync(get, HttpResponse.BodyHandlers.discarding())
                    .thenAccept(
                        r -> {
                          if (r.statusCode() == 200) {
                            seen.putIfAbsent(keeper, Instant.now());
                          }
                        })
                    .exceptionally(unanswered -> null));
          }
        });
    CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new)).join();
    return seen.size() == keepers.size();
  }

  private static RunView endedView(ProcessCluster cluster, RunView run) {
    return ClusterFixture.view(cluster.client, run.runId())
        .filter(view -> view.state().ended())
        .orElse(null);
  }

  private static RunView endedRun(ProcessCluster cluster, String job, int items) throws Exception {
    RunView created = createRun(cluster.client, job, accounts(items));
    RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(180));
    assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
    return ended;
  }

  /** {@code PUT /api/providers/default}: the budget of the provider every run here calls. */
  private static void putBudget(ProcessCluster.NodeProcess node, int maxInFlight) throws Exception {
    var set = send(node, "PUT", "/api/providers/default", "{\"maxInFlight\":" + maxInFlight + "}");
    assertEquals(200, set.statusCode(), set.body());
  }

  /** When the budget keeper running now ended its recovery, in seconds from {@code from}. */
  private static List<Double> budgetRecoveries(ProcessCluster.NodeProcess node, Instant from)
      throws Exception {
    List<Double> ends = new ArrayList<>();
    for (JsonNode provider :
        JSON.readTree(FaultOutcome.get(node, "/api/providers")).path("providers")) {
      for (JsonNode change : provider.path("changes")) {
        Instant at = Instant.parse(change.path("at").asText());
        if (change.path("reason").asText().startsWith("recovery over") && at.isAfter(from)) {
          ends.add(seconds(from, at));
        }
      }
    }
    return ends;
  }

  /** How many times each key of the verified run was looked up at the sim → how many keys. */
  private static Map<Long, Integer> lookupsPerKey(ProcessCluster cluster, RunView verified)
      throws Exception {
    Map<String, Long> lookups = VerifyProcessTest.lookups(cluster);
    Map<Long, Integer> histogram = new TreeMap<>();
    for (AccountCursor account : accounts(VERIFIED_ITEMS)) {
      ItemId id =
          ItemId.of(verified.job(), ClusterFixture.DATE, account.accountId(), account.cursor());
      histogram.merge(lookups.getOrDefault(id.idempotencyKey(), 0L), 1, Integer::sum);
    }
    return histogram;
  }

  /** The most calls the sim has had in flight at once since it started. */
  private static int simPeak(ProcessCluster cluster) throws Exception {
    HttpRequest stats = HttpRequest.newBuilder(cluster.simUrl.resolve("admin/stats")).build();
    String body = HTTP.send(stats, HttpResponse.BodyHandlers.ofString()).body();
    return JSON.readTree(body).path("peakInFlight").asInt();
  }

  /** A counter of {@code node}'s {@code /metrics}, summed over its labels. */
  private static long metric(ProcessCluster.NodeProcess node, String name) {
    return (long)
        FaultOutcome.get(node, "/metrics")
            .lines()
            .filter(line -> line.startsWith(name + " ") || line.startsWith(name + "{"))
            .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
            .sum();
  }

  private static HttpResponse<String> send(
      ProcessCluster.NodeProcess node, String method, String path, String json) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(30))
            .method(method, HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}

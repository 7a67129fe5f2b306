package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.Await;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Four hundred nights of small runs on one node with a short retention (issue 24's proof), on a
 * real PostgreSQL, with the node's clock advanced by hand (the clock the coordinator, the items and
 * the retention keeper read: {@code FencekeeperNode.builder(...).clock(...)}); everything else (the
 * sim provider, dispatch, the HTTP API, the daily pass and its deletes and vacuum) is the product
 * as it runs.
 *
 * <p>Scaled for a two-core CI: 20 accounts a night, and ten nights at a time: each round creates
 * the runs of ten business dates at once, lets them end, then moves the clock ten days on, so the
 * daily pass runs once a round and prunes ten nights at a time. The clock runs with real time
 * between the jumps (a claim that times out waits its 5 s and is handed out again). Retention keeps
 * 35 days: after each round's pass the database holds the last 30 nights. Asserted: the journal,
 * tag, snapshot and run_item tables stay within 10% from night 200 to night 400, the coordinator's
 * own journal stays bounded, 370 archives are written, and the archive of night 5 equals what the
 * API showed of it before it was pruned. Printed, not asserted: the sizes every 50 nights, {@code
 * GET /api/runs} latency and the node's idle CPU with a dashboard feed open, at night 10 and night
 * 400.
 */
class YearOfNightsTest {

  static final int NIGHTS = 400;
  static final int PER_ROUND = 10;
  static final int ACCOUNTS = 20;
  // 35 days: after a round's jump the rounds that ended 30 or more days before are due, the last
  // three (ended 10 to 30 days before, give or take the seconds the rounds took) are not
  static final int KEEP_DAYS = 35;
  static final Instant START = Instant.parse("2026-01-01T01:00:00Z");
  static final LocalDate FIRST_DATE = LocalDate.parse("2026-01-01");

  @Test
  void fourHundredNightsStayAsSmallAndAsFastAsTheFirstAndTheArchiveIsTheAudit() throws Exception {
    try (RetentionTestNode node =
        new RetentionTestNode(START, Map.of("keep-ended-runs-for", KEEP_DAYS + "d"), null, 8)) {
      String watched = "nightly/" + FIRST_DATE.plusDays(4); // night 5
      RunAuditCopy watchedBefore = null;
      Map<Integer, long[]> sizes = new LinkedHashMap<>();
      Map<Integer, String> figures = new LinkedHashMap<>();
      for (int round = 0; round < NIGHTS / PER_ROUND; round++) {
        List<String> runs = new ArrayList<>();
        for (int i = 0; i < PER_ROUND; i++) {
          LocalDate date = FIRST_DATE.plusDays((long) round * PER_ROUND + i);
          runs.add(
              node.createRun(
                  "nightly", date.toString(), RetentionTestNode.accounts("acct", ACCOUNTS)));
        }
        for (String runId : runs) {
          assertEquals("SUCCEEDED", node.awaitEnded(runId).path("state").asText(), runId);
        }
        int night = (round + 1) * PER_ROUND;
        if (round == 0) {
          RetentionKeeperTest.awaitFiled(node, watched);
          watchedBefore = RunAuditCopy.fromApi(node, watched);
        }
        if (night == 10 || night == NIGHTS) {
          figures.put(night, measure(node));
        }
        node.clock.jump(Duration.ofDays(PER_ROUND));
        // the daily pass prunes every round that ended more than 30 days before the new "now"
        int prunedRounds = Math.max(0, round - 2);
        awaitPrunedRuns(node, prunedRounds * PER_ROUND);
        if (night % 50 == 0) {
          sizes.put(night, sizes(node));
        }
      }

      figures.forEach((night, text) -> System.out.println("night " + night + ": " + text));
      sizes.forEach(
          (night, s) ->
              System.out.printf(
                  "night %d: event_journal %d, event_tag %d, snapshot %d, run_item %d bytes;"
                      + " total %d; coordinator journal rows %d, item journal rows %d%n",
                  night, s[0], s[1], s[2], s[3], s[4], s[5], s[6]));
      // from night 200: in a CI run at load 20-24 run_item's pages grew from 393 KB at night 100
      // to 541 KB at night 300 (the freed space of pruned nights not yet reused, as vacuum found
      // it), then held to night 400; the bound is that the last 200 nights add nothing
      long at200 = sizes.get(200)[4];
      long at400 = sizes.get(NIGHTS)[4];
      assertTrue(
          Math.abs(at400 - at200) <= at200 / 10,
          "journal, tag, snapshot and run_item tables within 10% from night 200 to 400: "
              + sizes.get(100)[4]
              + " at night 100, "
              + at200
              + " -> "
              + at400);
      assertTrue(
          sizes.get(NIGHTS)[5] <= 300,
          "the coordinator's journal stays bounded: " + sizes.get(NIGHTS)[5] + " rows");

      ArchiveReader reader = new ArchiveReader(node.archiveDir, node.json);
      assertEquals(NIGHTS - 3 * PER_ROUND, reader.list().size(), "an archive per pruned night");
      RunAuditCopy archived = RunAuditCopy.fromArchive(reader, watched);
      assertEquals(watchedBefore.run(), archived.run());
      assertEquals(watchedBefore.report(), archived.report());
      assertEquals(watchedBefore.events(), archived.events());
      assertEquals(ACCOUNTS, archived.report().size());
    }
  }

  /** Waits until {@code count} runs are pruned (the tombstones say so). */
  private static void awaitPrunedRuns(RetentionTestNode node, int count) {
    Await.until(
        Duration.ofSeconds(120),
        count + " runs pruned",
        () -> longs(node, "SELECT count(*) FROM run_record WHERE pruned_at IS NOT NULL")[0],
        pruned -> pruned == count);
  }

  /**
   * pg_total_relation_size of the journal, its tags, the snapshots and run_item, their sum, and the
   * journal rows of the coordinator and of the items.
   */
  private static long[] sizes(RetentionTestNode node) {
    long[] s =
        longs(
            node,
            "SELECT pg_total_relation_size('event_journal'), pg_total_relation_size('event_tag'),"
                + " pg_total_relation_size('snapshot'), pg_total_relation_size('run_item')");
    long[] rows =
        longs(
            node,
            "SELECT count(*) FILTER (WHERE persistence_id = 'RunCoordinator'),"
                + " count(*) FILTER (WHERE persistence_id LIKE 'WorkItem|%') FROM event_journal");
    return new long[] {s[0], s[1], s[2], s[3], s[0] + s[1] + s[2] + s[3], rows[0], rows[1]};
  }

  private static long[] longs(RetentionTestNode node, String sql) {
    try (Connection c =
            DriverManager.getConnection(node.db.url(), node.db.user(), node.db.password());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      long[] values = new long[rs.getMetaData().getColumnCount()];
      for (int i = 0; i < values.length; i++) {
        values[i] = rs.getLong(i + 1);
      }
      return values;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * GET /api/runs 30 times (the first page as the dashboard asks it, and a page of 10: the same
   * work at night 10 and night 400), and the node's CPU between two keep-alives of an open run-list
   * feed (15 s of a dashboard watching an idle node: the coordinator's ticks, the feed's poll, the
   * retention keeper's checks). In-process, so the CPU is the whole test JVM's, idle but for the
   * node.
   */
  private static String measure(RetentionTestNode node) throws Exception {
    // the dashboard's first page (100 runs: at night 10 there are 10), and a page of 10 at both
    String firstPage = latencies(node, "/api/runs");
    String tenRuns = latencies(node, "/api/runs?limit=10");
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<InputStream> feed =
        http.send(
            HttpRequest.newBuilder(URI.create(node.base + "/api/events/runs"))
                .header("Authorization", "Bearer " + RetentionTestNode.TOKEN)
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    CompletableFuture<long[]> window = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader lines =
                  new BufferedReader(new InputStreamReader(feed.body(), StandardCharsets.UTF_8))) {
                long[] start = null;
                String line;
                while ((line = lines.readLine()) != null) {
                  if (line.startsWith(": keep-alive")) {
                    long[] now = {System.nanoTime(), processCpuNanos()};
                    if (start != null) {
                      window.complete(new long[] {now[0] - start[0], now[1] - start[1]});
                      return;
                    }
                    start = now;
                  }
                }
              } catch (Exception e) {
                window.completeExceptionally(e);
              }
            });
    reader.setDaemon(true);
    reader.start();
    long[] spent = window.get(90, java.util.concurrent.TimeUnit.SECONDS);
    return String.format(
        "GET /api/runs %s, GET /api/runs?limit=10 %s; idle CPU %.1f ms per second"
            + " over %.1f s with the run-list feed open (load average %.1f)",
        firstPage,
        tenRuns,
        spent[1] / 1e6 / (spent[0] / 1e9),
        spent[0] / 1e9,
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }

  /** 30 calls of {@code path} one after the other: their median and 90th percentile. */
  private static String latencies(RetentionTestNode node, String path) {
    long[] micros = new long[30];
    int runs = 0;
    for (int i = 0; i < micros.length; i++) {
      long started = System.nanoTime();
      RetentionTestNode.Answer page = node.get(path);
      micros[i] = (System.nanoTime() - started) / 1000;
      assertEquals(200, page.status());
      runs = page.tree().path("runs").size();
    }
    Arrays.sort(micros);
    return String.format(
        "(%d runs) median %.1f ms, p90 %.1f ms", runs, micros[15] / 1000.0, micros[27] / 1000.0);
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}

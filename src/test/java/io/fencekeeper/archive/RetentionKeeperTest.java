package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.testing.Await;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The retention keeper on a real node (PostgreSQL, workers, the HTTP API, a manual clock): the
 * daily pass archives an ended run once it is older than {@code keep-ended-runs-for} and deletes
 * its rows, and the archive holds exactly what the API showed; the pruned run stays known and
 * cannot come back; a run resumed after it ended PARTIAL is kept from its last end, and is never
 * touched while it runs again.
 */
class RetentionKeeperTest {

  static final Instant NIGHT = Instant.parse("2026-11-30T01:00:00Z");

  @Test
  void theDailyPassArchivesWhatTheApiShowedThenDeletesTheRunsRowsAndKeepsItsTombstone()
      throws Exception {
    NightProvider provider = new NightProvider();
    try (RetentionTestNode node =
        new RetentionTestNode(NIGHT, Map.of("keep-ended-runs-for", "30d"), provider, 4)) {
      List<String> accounts = new ArrayList<>(RetentionTestNode.accounts("acct", 5));
      accounts.add("fail-1"); // refused for good: the run ends PARTIAL, with a FAILED item
      String old = node.createRun("nightly", "2026-11-29", accounts);
      assertEquals("PARTIAL", node.awaitEnded(old).path("state").asText());
      String scope = awaitFiled(node, old);
      RunAuditCopy before = RunAuditCopy.fromApi(node, old);
      long rowsBefore = node.rowsOf(old, scope);
      assertTrue(rowsBefore > accounts.size() * 2L, "events and run_item rows: " + rowsBefore);

      // two weeks later another night: younger than the retention, it stays
      node.clock.jump(Duration.ofDays(14));
      String young = node.createRun("nightly", "2026-12-13", RetentionTestNode.accounts("acct", 3));
      assertEquals("SUCCEEDED", node.awaitEnded(young).path("state").asText());
      String youngScope = awaitFiled(node, young);
      long youngRows = node.rowsOf(young, youngScope);

      // a month and a day after the first night ended: the daily pass is due and prunes it
      node.clock.jump(Duration.ofDays(17));
      JsonNode pruned = node.awaitPruned(old);
      JsonNode archive = pruned.path("archive");
      assertEquals("nightly__2026-11-29.jsonl.gz", archive.path("file").asText());
      assertEquals(accounts.size(), archive.path("items").asInt());
      assertEquals(rowsBefore, archive.path("rowsDeleted").asLong(), "every row counted once");

      // the archive is the audit the API showed before, whole (its SHA-256 as recorded)
      ArchiveReader reader = new ArchiveReader(node.archiveDir, node.json);
      RunAuditCopy archived = RunAuditCopy.fromArchive(reader, old);
      assertEquals(before.run(), archived.run(), "the run view");
      assertEquals(before.report(), archived.report(), "the report, line by line");
      assertEquals(before.events(), archived.events(), "every item's events");
      assertEquals(
          archive.path("sha256").asText(),
          ArchiveReader.sha256(node.archiveDir.resolve(archive.path("file").asText())));
      assertEquals(0, node.rowsOf(old, scope), "no event, tag, snapshot or run_item row is left");
      assertEquals(youngRows, node.rowsOf(young, youngScope), "the younger run is untouched");

      // the pruned run stays known; its items are gone and it cannot come back
      assertEquals("PARTIAL", pruned.path("state").asText());
      assertEquals(410, node.get("/api/runs/" + RetentionTestNode.seg(old) + "/items").status());
      assertEquals(410, node.get("/api/runs/" + RetentionTestNode.seg(old) + "/report").status());
      RetentionTestNode.Answer item =
          node.get("/api/items/" + RetentionTestNode.seg(old + "/acct-1/c-1") + "/audit");
      assertEquals(410, item.status(), item.body());
      assertEquals("run_archived", item.tree().path("error").asText());
      assertFalse(item.body().contains(archive.path("file").asText()), "no file in an error");
      RetentionTestNode.Answer resume =
          node.post(
              "/api/runs/" + RetentionTestNode.seg(old) + "/resume",
              "{\"deadline\":\"" + node.clock.instant().plus(Duration.ofHours(2)) + "\"}");
      assertEquals(409, resume.status(), resume.body());
      assertEquals("run_archived", resume.tree().path("error").asText());
      int applied = provider.applied().size();
      RetentionTestNode.Answer again =
          node.post(
              "/api/runs",
              "{\"job\":\"nightly\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
                  + node.clock.instant().plus(Duration.ofHours(6))
                  + "\",\"maxAttempts\":3,\"maxFailedItems\":10,\"scope\":{\"type\":\"inline\","
                  + "\"accounts\":[{\"accountId\":\"acct-1\",\"cursor\":\"c-1\"}]}}");
      assertEquals(409, again.status(), "a create of the archived run is not a new night");
      assertEquals(applied, provider.applied().size(), "nothing applied again");

      // what the node counted: a run archived, its bytes, its rows
      String metrics = node.metrics.scrape();
      assertTrue(metrics.contains("fencekeeper_retention_runs_archived_total 1.0"), metrics);
      assertTrue(
          metrics.contains("fencekeeper_retention_rows_deleted_total " + rowsBefore + ".0"),
          metrics);
      assertTrue(
          metrics.contains(
              "fencekeeper_retention_archive_bytes_total "
                  + Files.size(node.archiveDir.resolve(archive.path("file").asText()))
                  + ".0"),
          metrics);
    }
  }

  /**
   * What retention does to a run resumed after it ended PARTIAL: its age counts from its last end.
   * Resumed 20 days after its first end, it ends again; 31 days after the first end the daily pass
   * prunes a run that ended the same night but leaves this one, and prunes it once 30 days have
   * passed since its second end, its archive showing the resume.
   */
  @Test
  void aRunResumedAfterItEndedPartialIsKeptFromItsLastEnd() throws Exception {
    NightProvider provider = new NightProvider();
    try (RetentionTestNode node =
        new RetentionTestNode(NIGHT, Map.of("keep-ended-runs-for", "30d"), provider, 4)) {
      List<String> accounts = new ArrayList<>(RetentionTestNode.accounts("acct", 3));
      accounts.add("fail-1");
      String resumed = node.createRun("nightly", "2026-11-29", accounts);
      String control = node.createRun("weekly", "2026-11-29", RetentionTestNode.accounts("w", 2));
      assertEquals("PARTIAL", node.awaitEnded(resumed).path("state").asText());
      assertEquals("SUCCEEDED", node.awaitEnded(control).path("state").asText());
      String scope = awaitFiled(node, resumed);
      awaitFiled(node, control);

      node.clock.jump(Duration.ofDays(20));
      Instant resumedAt = node.clock.instant();
      RetentionTestNode.Answer resume =
          node.post(
              "/api/runs/" + RetentionTestNode.seg(resumed) + "/resume",
              "{\"deadline\":\"" + resumedAt.plus(Duration.ofHours(6)) + "\"}");
      assertEquals(200, resume.status(), resume.body());
      JsonNode ended =
          Await.until(
              Duration.ofSeconds(90),
              resumed + " ended again",
              () -> node.run(resumed),
              run ->
                  run.path("resumes").asInt() == 1
                      && !run.path("state").asText().equals("RUNNING"));
      assertEquals("PARTIAL", ended.path("state").asText(), "fail-1 is refused again");
      Instant secondEnd = Instant.parse(ended.path("endedAt").asText());
      assertTrue(!secondEnd.isBefore(resumedAt), "it ended again after the resume: " + secondEnd);
      awaitFiled(node, resumed);
      long rows = node.rowsOf(resumed, scope);

      // 31 days after the first end: the run that ended with it goes, the resumed one stays
      node.clock.jump(Duration.ofDays(11));
      node.awaitPruned(control);
      assertTrue(node.run(resumed).path("archive").isNull(), "ended 11 days ago: kept");
      assertEquals(rows, node.rowsOf(resumed, scope));

      // 30 days after its last end it goes too, its archive showing both ends
      node.clock.jump(Duration.ofDays(20));
      JsonNode pruned = node.awaitPruned(resumed);
      assertEquals(0, node.rowsOf(resumed, scope));
      RunAuditCopy archived =
          RunAuditCopy.fromArchive(new ArchiveReader(node.archiveDir, node.json), resumed);
      assertEquals(1, archived.run().path("resumes").asInt());
      assertEquals(secondEnd.toString(), archived.run().path("endedAt").asText());
      List<String> failTrail = new ArrayList<>();
      archived
          .events()
          .get(resumed + "/fail-1/c-1")
          .forEach(e -> failTrail.add(e.path("type").asText()));
      assertTrue(
          failTrail.contains("ItemReopened"), "the resume is in the item's trail: " + failTrail);
      assertEquals("PARTIAL", pruned.path("state").asText());
    }
  }

  /**
   * A run that runs again (resumed) is never touched, however old its filed record: the pass asks
   * the coordinator, which holds it and refuses. A dry run lists it as skipped and changes nothing;
   * once it has ended again it is archived with what the resume did.
   */
  @Test
  void aRunRunningAgainIsNeverTouchedAndADryRunChangesNothing() throws Exception {
    NightProvider provider = new NightProvider();
    try (RetentionTestNode node =
        new RetentionTestNode(NIGHT, Map.of("keep-ended-runs-for", "off"), provider, 4)) {
      List<String> accounts = new ArrayList<>(RetentionTestNode.accounts("acct", 3));
      accounts.add("fail-1");
      String runId = node.createRun("nightly", "2026-11-29", accounts);
      assertEquals("PARTIAL", node.awaitEnded(runId).path("state").asText());
      String scope = awaitFiled(node, runId);
      String later = node.clock.instant().plus(Duration.ofDays(1)).toString();

      RetentionTestNode.Answer dry =
          node.post("/api/archive/prune", "{\"endedBefore\":\"" + later + "\",\"dryRun\":true}");
      assertEquals(200, dry.status(), dry.body());
      assertEquals(1, dry.tree().path("total").asInt(), dry.body());
      assertEquals("ARCHIVE", dry.tree().path("runs").get(0).path("action").asText());
      long rows = node.rowsOf(runId, scope);
      assertTrue(node.run(runId).path("archive").isNull(), "a dry run changes nothing");

      // resumed: its failing item now waits at the provider, so the run stays RUNNING
      provider.holdFailing();
      RetentionTestNode.Answer resume =
          node.post(
              "/api/runs/" + RetentionTestNode.seg(runId) + "/resume",
              "{\"deadline\":\"" + node.clock.instant().plus(Duration.ofHours(6)) + "\"}");
      assertEquals(200, resume.status(), resume.body());
      assertEquals("RUNNING", node.run(runId).path("state").asText());

      RetentionTestNode.Answer pass = prune(node, later);
      assertEquals(202, pass.status(), pass.body());
      JsonNode decision = pass.tree().path("runs").get(0);
      assertEquals("SKIP", decision.path("action").asText(), pass.body());
      awaitIdle(node, later);
      assertEquals("RUNNING", node.run(runId).path("state").asText());
      assertTrue(node.run(runId).path("archive").isNull());
      assertTrue(node.rowsOf(runId, scope) >= rows, "nothing of a running run is deleted");

      provider.release();
      assertEquals("SUCCEEDED", node.awaitEnded(runId).path("state").asText());
      awaitFiled(node, runId);
      // passes on demand until one has archived it: a pass's answer (its plan) may still say SKIP
      // while the coordinator files the run, and the pass itself then archives it (a .ci/run saw
      // exactly that, and a wait for an ARCHIVE answer then never saw one)
      Await.until(
          Duration.ofSeconds(60),
          "the run filed again, then archived by a pass on demand",
          () -> {
            if (!node.run(runId).path("archive").isNull()) {
              return true;
            }
            prune(node, later);
            return false;
          });
      node.awaitPruned(runId);
      RunAuditCopy archived =
          RunAuditCopy.fromArchive(new ArchiveReader(node.archiveDir, node.json), runId);
      assertEquals("SUCCEEDED", archived.run().path("state").asText());
      assertEquals(1, archived.run().path("resumes").asInt());
      assertEquals(0, node.rowsOf(runId, scope));
    }
  }

  private static RetentionTestNode.Answer prune(RetentionTestNode node, String endedBefore) {
    return node.post("/api/archive/prune", "{\"endedBefore\":\"" + endedBefore + "\"}");
  }

  /** The pass has ended: a dry run is accepted again (409 retention_busy while one runs). */
  private static void awaitIdle(RetentionTestNode node, String endedBefore) {
    Await.until(
        Duration.ofSeconds(60),
        "the retention pass ended",
        () ->
            node.post(
                        "/api/archive/prune",
                        "{\"endedBefore\":\"" + endedBefore + "\",\"dryRun\":true}")
                    .status()
                == 200);
  }

  /** The run is in run_record (the coordinator filed it): its scope id. */
  /**
   * The next daily pass is due a day after the last one started, not after it ended: a run that
   * came due while a pass ran waits a day at most. Here the clock moves on while a pass is held in
   * its last step (its VACUUM waits for a lock this test holds on {@code run_item}); measured from
   * its end the next pass would be a day away, and the run that came due meanwhile would wait for
   * it (a CI run of {@link #aRunResumedAfterItEndedPartialIsKeptFromItsLastEnd} once waited in vain
   * so: its clock moved while the pass that had pruned another run was finishing).
   */
  @Test
  void theNextDailyPassIsDueADayAfterTheLastStartedNotAfterItEnded() throws Exception {
    NightProvider provider = new NightProvider();
    try (RetentionTestNode node =
        new RetentionTestNode(NIGHT, Map.of("keep-ended-runs-for", "30d"), provider, 4)) {
      String early = node.createRun("nightly", "2026-11-29", RetentionTestNode.accounts("e", 2));
      assertEquals("SUCCEEDED", node.awaitEnded(early).path("state").asText());
      awaitFiled(node, early);
      node.clock.jump(Duration.ofDays(20));
      String late = node.createRun("nightly", "2026-12-19", RetentionTestNode.accounts("l", 2));
      assertEquals("SUCCEEDED", node.awaitEnded(late).path("state").asText());
      awaitFiled(node, late);

      try (Connection lock =
          DriverManager.getConnection(node.db.url(), node.db.user(), node.db.password())) {
        lock.setAutoCommit(false);
        try (Statement s = lock.createStatement()) {
          // VACUUM takes this mode too, so the pass cannot end while this transaction is open
          s.execute("LOCK TABLE run_item IN SHARE UPDATE EXCLUSIVE MODE");
        }
        // 31 days after the early run ended: a pass prunes it (the late one is 11 days old)
        node.clock.jump(Duration.ofDays(11));
        node.awaitPruned(early);
        assertTrue(node.run(late).path("archive").isNull(), "ended 11 days ago: kept");
        // while that pass is held: 31 days after the late run ended
        node.clock.jump(Duration.ofDays(20));
        lock.commit();
      }

      JsonNode pruned = node.awaitPruned(late);
      assertEquals("SUCCEEDED", pruned.path("state").asText());
    }
  }

  static String awaitFiled(RetentionTestNode node, String runId) {
    return Await.until(
        Duration.ofSeconds(30),
        runId + " filed",
        () -> node.node.endedRuns().find(runId).map(f -> f.record().scopeId()).orElse(null),
        scope -> scope != null);
  }
}

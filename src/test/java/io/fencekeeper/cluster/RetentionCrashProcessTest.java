package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.archive.ArchiveManifest;
import io.fencekeeper.archive.ArchiveReader;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.FreePorts;
import io.fencekeeper.testing.ProcessTest;
import io.fencekeeper.testing.TestDatabases;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Retention survives a kill -9 in the middle of its deletes (issue 24's proof), with real
 * processes: one {@code serve} node on PostgreSQL, configured by its environment as an operator
 * does ({@code FENCEKEEPER_RETENTION_*}; a retention of one second), three ended runs of 1,000
 * items, and {@code fencekeeper archive prune} run as its own process against the node's API with
 * the admin token. While a run's rows are half deleted, the node is killed with SIGKILL: that run's
 * archive is already whole on disk. Restarted, the node's first daily pass finishes that run from
 * where the deletes stopped and prunes the others: every row goes exactly once (the counts on each
 * tombstone equal the rows there were), each archive equals what the API showed before, and {@code
 * fencekeeper archive show --report} prints what {@code GET .../report} printed.
 */
@ProcessTest
class RetentionCrashProcessTest {

  static final String TOKEN = "retention-crash-token-0123456789";
  static final int ITEMS = 1000;
  static final int DELETE_BATCH = 10;
  static final List<String> DATES = List.of("2026-11-27", "2026-11-28", "2026-11-29");
  static final Pattern READY = Pattern.compile("(fencekeeper node up)");
  static final ObjectMapper JSON = ApiJson.mapper();

  final HttpClient http = HttpClient.newHttpClient();
  final TestDatabases.Target db = TestDatabases.freshPostgres();
  Path dir;
  int httpPort;

  @Test
  void aPassKilledWhileDeletingIsFinishedAfterARestartWithTheArchiveIntact() throws Exception {
    dir = Files.createTempDirectory("fk-retention-crash");
    Path archiveDir = dir.resolve("archive");
    Files.writeString(
        dir.resolve("retention.conf"),
        // small delete batches, so that a kill lands between two of them; a check a second
        "fencekeeper.retention { batch-size = " + DELETE_BATCH + ", check-interval = 1s }\n");
    int remote = FreePorts.next();
    int management = FreePorts.next();
    httpPort = FreePorts.next();
    Process node = start("node.log", remote, management);
    Process restarted = null;
    try {
      awaitLine("node.log", node, Pattern.compile("(retention pass \\(daily\\) done)"));
      List<String> runs = new ArrayList<>();
      for (String date : DATES) {
        runs.add(upload("crash", date));
      }
      for (String runId : runs) {
        Await.until(
            Duration.ofSeconds(180),
            runId + " SUCCEEDED",
            () -> get("/api/runs/" + seg(runId)).path("state").asText(),
            state -> state.equals("SUCCEEDED"));
      }
      Await.until(
          Duration.ofSeconds(30),
          "the three runs filed",
          () -> longValue("SELECT count(*) FROM run_record", null),
          count -> count == 3);

      // what the API shows of each run, and the rows each has, before anything is pruned
      Map<String, String> scopes = new HashMap<>();
      Map<String, Long> rowsBefore = new HashMap<>();
      Map<String, Long> eventsBefore = new HashMap<>();
      Map<String, JsonNode> views = new HashMap<>();
      Map<String, String> reports = new HashMap<>();
      Map<String, JsonNode> audits = new LinkedHashMap<>();
      for (String runId : runs) {
        String record = stringValue("SELECT record FROM run_record WHERE run_id = ?", runId);
        scopes.put(runId, JSON.readTree(record).path("scopeId").asText());
        eventsBefore.put(runId, journalRows(runId, "event_journal"));
        rowsBefore.put(runId, rowsOf(runId, scopes.get(runId)));
        views.put(runId, get("/api/runs/" + seg(runId)));
        reports.put(runId, text("/api/runs/" + seg(runId) + "/report?format=jsonl"));
        for (int account : List.of(1, 2, 500, ITEMS)) {
          String itemId = runId + "/acct-" + account + "/c-1";
          audits.put(itemId, get("/api/items/" + seg(itemId) + "/audit?limit=1000"));
        }
      }
      assertTrue(eventsBefore.get(runs.get(0)) >= 2L * ITEMS, "a claim and a completion an item");

      // retention on demand, from the command line against the node's API
      Process prune =
          cli(
              "prune.out",
              "archive",
              "prune",
              "--ended-before",
              Instant.now().plus(Duration.ofDays(1)).toString(),
              "--url",
              "http://127.0.0.1:" + httpPort,
              "--token",
              TOKEN);
      // kill -9 while a run is archived and its rows are half deleted: the node is frozen first,
      // so the rows counted are the rows the kill finds (a CI run counted some, and the pass had
      // deleted the rest by the time the kill landed)
      String interrupted =
          Await.until(
              Duration.ofSeconds(120),
              "a run archived and half deleted",
              () -> frozenHalfDeleted(node, runs, scopes),
              found -> found != null);
      ProcessCluster.signal(node, "KILL");
      assertTrue(node.waitFor(30, TimeUnit.SECONDS));
      assertTrue(prune.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, prune.exitValue(), Files.readString(dir.resolve("prune.out")));
      assertTrue(
          Files.readString(dir.resolve("prune.out")).contains("ARCHIVE crash/" + DATES.get(0)),
          Files.readString(dir.resolve("prune.out")));
      long left = rowsOf(interrupted, scopes.get(interrupted));
      assertTrue(left > 0 && left < rowsBefore.get(interrupted), "killed mid-way: " + left);

      // the archive was whole before the first delete
      ArchiveReader reader = new ArchiveReader(archiveDir, JSON);
      ArchiveManifest atKill = reader.manifest(interrupted).orElseThrow();
      reader.verify(atKill);
      assertEquals(ITEMS, atKill.items());

      restarted = start("node-restart.log", remote, management);
      for (String runId : runs) {
        Await.until(
            Duration.ofSeconds(180),
            runId + " pruned after the restart",
            () ->
                longValue(
                    "SELECT count(*) FROM run_record WHERE run_id = ? AND pruned_at IS NOT NULL",
                    runId),
            count -> count == 1);
      }
      assertEquals(
          atKill.sha256(),
          reader.manifest(interrupted).orElseThrow().sha256(),
          "the interrupted run's archive is not written again");

      for (String runId : runs) {
        assertEquals(0, rowsOf(runId, scopes.get(runId)), runId + ": no row left");
        assertEquals(
            rowsBefore.get(runId),
            longValue("SELECT rows_deleted FROM run_record WHERE run_id = ?", runId),
            runId + ": every row deleted once, none twice");
        ArchiveManifest manifest = reader.manifest(runId).orElseThrow();
        reader.verify(manifest);
        assertEquals(ITEMS, manifest.items());
        assertEquals(eventsBefore.get(runId), manifest.events(), runId + ": every event archived");
        JsonNode[] run = new JsonNode[1];
        Set<String> items = new HashSet<>();
        Map<String, List<JsonNode>> events = new HashMap<>();
        reader.lines(
            manifest,
            line -> {
              switch (line.path("kind").asText()) {
                case "run" -> run[0] = line.path("run");
                case "item" -> items.add(line.path("itemId").asText());
                case "event" ->
                    events
                        .computeIfAbsent(line.path("itemId").asText(), k -> new ArrayList<>())
                        .add(line.path("event"));
                default -> {}
              }
            });
        assertEquals(views.get(runId), run[0], runId + ": the run as the API showed it");
        assertEquals(ITEMS, items.size(), runId + ": each item once");
        for (int account : List.of(1, 2, 500, ITEMS)) {
          String itemId = runId + "/acct-" + account + "/c-1";
          assertEquals(
              List.copyOf(toList(audits.get(itemId).path("events"))),
              events.get(itemId),
              itemId + ": its audit as the API showed it");
        }
        // the archive read the way `report` reads the API prints the same lines
        Process show =
            cli(
                "show-" + runId.replace('/', '_') + ".out",
                "archive",
                "show",
                runId,
                "--report",
                "--format",
                "jsonl",
                "--archive-dir",
                archiveDir.toString());
        assertTrue(show.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, show.exitValue());
        assertEquals(
            reports.get(runId),
            Files.readString(dir.resolve("show-" + runId.replace('/', '_') + ".out")),
            runId + ": archive show --report prints the report the API gave");
      }
      JsonNode tombstone = get("/api/runs/" + seg(interrupted));
      assertEquals("SUCCEEDED", tombstone.path("state").asText());
      assertEquals(
          rowsBefore.get(interrupted), tombstone.path("archive").path("rowsDeleted").asLong());
      JsonNode nothingLeft =
          JSON.readTree(
              post(
                  "/api/archive/prune",
                  "{\"endedBefore\":\""
                      + Instant.now().plus(Duration.ofDays(1))
                      + "\",\"dryRun\":true}"));
      assertEquals(0, nothingLeft.path("total").asInt(), "no pass left half-way: " + nothingLeft);
    } finally {
      for (Process p : new Process[] {node, restarted}) {
        if (p != null && p.isAlive()) {
          p.destroy();
          if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
          }
        }
      }
    }
  }

  /**
   * While a run is being pruned (archived, not yet pruned), freezes the node (SIGSTOP) and counts
   * the run's run_item rows: when some are gone and more than two delete batches are left (one
   * batch the node sent before it froze may still commit), answers that run with the node still
   * frozen; otherwise lets the node go on and answers null.
   */
  private String frozenHalfDeleted(Process node, List<String> runs, Map<String, String> scopes) {
    for (String runId : runs) {
      long archived =
          longValue(
              "SELECT count(*) FROM run_record WHERE run_id = ? AND archived_at IS NOT NULL"
                  + " AND pruned_at IS NULL",
              runId);
      if (archived == 1) {
        try {
          ProcessCluster.signal(node, "STOP");
          long staged =
              longValue("SELECT count(*) FROM run_item WHERE scope_id = ?", scopes.get(runId));
          if (staged > 2 * DELETE_BATCH && staged < ITEMS) {
            return runId;
          }
          ProcessCluster.signal(node, "CONT");
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    }
    return null;
  }

  private Process start(String log, int remote, int management) throws IOException {
    List<String> command = new ArrayList<>(ChildJvm.command());
    command.addAll(
        List.of(
            "io.fencekeeper.cli.Main",
            "serve",
            "--config",
            dir.resolve("retention.conf").toString()));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.redirectErrorStream(true).redirectOutput(dir.resolve(log).toFile());
    Map<String, String> env = builder.environment();
    env.put("FENCEKEEPER_DB_URL", db.url());
    env.put("FENCEKEEPER_DB_USER", db.user());
    env.put("FENCEKEEPER_DB_PASSWORD", db.password());
    env.put("FENCEKEEPER_DATA_DIR", dir.resolve("node").toString());
    env.put("FENCEKEEPER_REMOTE_PORT", String.valueOf(remote));
    env.put("FENCEKEEPER_MANAGEMENT_PORT", String.valueOf(management));
    env.put("FENCEKEEPER_HTTP_PORT", String.valueOf(httpPort));
    env.put("FENCEKEEPER_API_TOKEN", TOKEN);
    env.put("FENCEKEEPER_WORKERS", "8");
    env.put("FENCEKEEPER_RETENTION_KEEP_ENDED_RUNS_FOR", "1s");
    env.put("FENCEKEEPER_RETENTION_ARCHIVE_DIR", dir.resolve("archive").toString());
    Process process = builder.start();
    awaitLine(log, process, READY);
    return process;
  }

  private Process cli(String out, String... args) throws IOException {
    List<String> command = new ArrayList<>(ChildJvm.command());
    command.add("io.fencekeeper.cli.Main");
    command.addAll(List.of(args));
    return new ProcessBuilder(command)
        .redirectOutput(dir.resolve(out).toFile())
        .redirectError(dir.resolve(out + ".err").toFile())
        .start();
  }

  private void awaitLine(String log, Process process, Pattern line) {
    ProcessCluster.awaitLineWithin(Duration.ofSeconds(180), dir.resolve(log), line, process);
  }

  /** Uploads a CSV of {@link #ITEMS} accounts as the scope of a new run of {@code job}. */
  private String upload(String job, String date) throws Exception {
    StringBuilder csv = new StringBuilder("accountId,cursor\n");
    for (int i = 1; i <= ITEMS; i++) {
      csv.append("acct-").append(i).append(",c-1\n");
    }
    String query =
        "job="
            + job
            + "&businessDate="
            + date
            + "&deadline="
            + Instant.now().plus(Duration.ofHours(2));
    HttpResponse<String> created =
        http.send(
            request("/api/runs?" + query)
                .header("Content-Type", "text/csv")
                .POST(HttpRequest.BodyPublishers.ofString(csv.toString()))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(201, created.statusCode(), created.body());
    return job + "/" + date;
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
        .timeout(Duration.ofSeconds(60))
        .header("Authorization", "Bearer " + TOKEN);
  }

  private String text(String path) {
    try {
      HttpResponse<String> answer =
          http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, answer.statusCode(), answer.body());
      return answer.body();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private JsonNode get(String path) {
    try {
      return JSON.readTree(text(path));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private String post(String path, String body) throws Exception {
    HttpResponse<String> answer =
        http.send(
            request(path)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, answer.statusCode(), answer.body());
    return answer.body();
  }

  private static String seg(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  private static List<JsonNode> toList(JsonNode array) {
    List<JsonNode> list = new ArrayList<>();
    array.forEach(list::add);
    return list;
  }

  /** The run's event, tag, snapshot and run_item rows. */
  private long rowsOf(String runId, String scopeId) {
    return journalRows(runId, "event_journal")
        + journalRows(runId, "snapshot")
        + longValue(
            "SELECT count(*) FROM event_tag t JOIN event_journal j ON j.ordering = t.event_id"
                + " WHERE j.persistence_id LIKE ?",
            "WorkItem|" + runId + "/%")
        + longValue("SELECT count(*) FROM run_item WHERE scope_id = ?", scopeId);
  }

  private long journalRows(String runId, String table) {
    return longValue(
        "SELECT count(*) FROM " + table + " WHERE persistence_id LIKE ?",
        "WorkItem|" + runId + "/%");
  }

  private long longValue(String sql, String param) {
    return Long.parseLong(stringValue(sql, param));
  }

  private String stringValue(String sql, String param) {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        PreparedStatement ps = c.prepareStatement(sql)) {
      if (param != null) {
        ps.setString(1, param);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}

package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.DatabaseLink;
import io.fencekeeper.testing.FreePorts;
import io.fencekeeper.testing.ProcessTest;
import io.fencekeeper.testing.TestDatabases;
import java.io.BufferedWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, findings 3 and 4: a million-account scope is uploaded to a {@code serve} process with a
 * 256 MiB heap and staged in full. Before, the scope had to be a file on the node, and the
 * duplicate check alone held 40-60 bytes per account (three long[] tables) in the heap.
 *
 * <p>Issue 50: then a million accounts from a file in the node's scope directory, with the database
 * cut off for seconds while they stage (the node's journal and run tables alike, through a {@link
 * DatabaseLink}). Before, the batch the outage met failed and the run stayed STAGING for good; now
 * the staging waits the outage out and goes on from the rows it has, and the run is created with
 * every account once, nobody creating it again.
 */
@ProcessTest
class MillionRowUploadProcessTest {

  private static final int ROWS = 1_000_000;

  @Test
  void aMillionRowsUploadedThenAMillionFromAFileThroughAnOutageAreStagedWithA256MiBHeap()
      throws Exception {
    TestDatabases.Target db = TestDatabases.freshPostgres();
    Path dir = Files.createTempDirectory("fencekeeper-upload");
    Path csv = dir.resolve("accounts.csv");
    try (BufferedWriter out = Files.newBufferedWriter(csv)) {
      out.write("accountId,cursor\n");
      for (int i = 0; i < ROWS; i++) {
        out.write("acct-" + i + ",c-" + (i % 7) + "\n");
      }
    }
    Path scopes = Files.createDirectories(dir.resolve("scopes"));
    Files.copy(csv, scopes.resolve("accounts.csv"));
    DatabaseLink link = new DatabaseLink(db.url());
    int http = FreePorts.next();
    int management = FreePorts.next();
    List<String> command = new ArrayList<>(ChildJvm.command()); // -Xmx256m
    command.add(1, "-Xlog:gc:file=" + dir.resolve("gc.log"));
    command.addAll(List.of("io.fencekeeper.cli.Main", "serve"));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("node.log").toFile());
    Map<String, String> env = builder.environment();
    env.put("FENCEKEEPER_DB_URL", link.url(db.url()));
    env.put("FENCEKEEPER_DB_USER", db.user());
    env.put("FENCEKEEPER_DB_PASSWORD", db.password());
    env.put("FENCEKEEPER_DATA_DIR", dir.resolve("data").toString());
    env.put("FENCEKEEPER_SCOPE_DIR", scopes.toString());
    env.put("FENCEKEEPER_HTTP_PORT", String.valueOf(http));
    env.put("FENCEKEEPER_MANAGEMENT_PORT", String.valueOf(management));
    env.put("FENCEKEEPER_REMOTE_PORT", String.valueOf(FreePorts.next()));
    env.put("FENCEKEEPER_SEED_NODES", "");
    env.put("FENCEKEEPER_WORKERS", "0"); // staging only: the items stay PENDING
    env.put("FENCEKEEPER_LOG_LEVEL", "WARN");
    Process node = builder.start();
    try {
      HttpClient client = HttpClient.newHttpClient();
      Await.until(
          Duration.ofSeconds(90),
          "the node to be ready",
          () -> {
            if (!node.isAlive()) {
              throw new AssertionError(
                  "node exited: " + ProcessCluster.tail(dir.resolve("node.log")));
            }
            try {
              return client
                      .send(
                          HttpRequest.newBuilder(
                                  URI.create("http://127.0.0.1:" + management + "/health/ready"))
                              .build(),
                          HttpResponse.BodyHandlers.discarding())
                      .statusCode()
                  == 200;
            } catch (Exception e) {
              return false;
            }
          });
      String base = "http://127.0.0.1:" + http;
      long started = System.nanoTime();
      HttpResponse<String> created =
          client.send(
              HttpRequest.newBuilder(
                      URI.create(
                          base
                              + "/api/runs?job=million&businessDate=2026-11-29"
                              + "&deadline="
                              // the real clock's deadline: an hour ahead of now, whatever today is
                              + java.time.Instant.now().plus(java.time.Duration.ofHours(1))))
                  .header("Content-Type", "text/csv")
                  .POST(HttpRequest.BodyPublishers.ofFile(csv))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      double uploadSeconds = (System.nanoTime() - started) / 1e9;
      assertTrue(
          created.statusCode() == 201 || created.statusCode() == 202,
          created.statusCode() + " " + created.body());
      ObjectMapper json = new ObjectMapper();
      JsonNode run =
          Await.until(
              Duration.ofSeconds(120),
              "the run to be created",
              () -> {
                try {
                  return json.readTree(
                      client
                          .send(
                              HttpRequest.newBuilder(
                                      URI.create(base + "/api/runs/million%2F2026-11-29"))
                                  .build(),
                              HttpResponse.BodyHandlers.ofString())
                          .body());
                } catch (Exception e) {
                  return null;
                }
              },
              body -> body != null && "RUNNING".equals(body.path("state").asText()));
      double createdSeconds = (System.nanoTime() - started) / 1e9;

      assertEquals(ROWS, run.path("counts").path("total").asLong(), run.toString());
      try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM run_item")) {
        rs.next();
        assertEquals(ROWS, rs.getLong(1), "every row staged once");
      }
      String fromFile =
          "{\"job\":\"million-file\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
              + java.time.Instant.now().plus(java.time.Duration.ofHours(1))
              + "\",\"scope\":{\"type\":\"csv\",\"path\":\"accounts.csv\"}}";
      String fileRun = base + "/api/runs/million-file%2F2026-11-29";
      long fileStarted = System.nanoTime();
      HttpResponse<String> fileCreated =
          client.send(
              HttpRequest.newBuilder(URI.create(base + "/api/runs"))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(fromFile))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertTrue(
          fileCreated.statusCode() == 201 || fileCreated.statusCode() == 202,
          fileCreated.statusCode() + " " + fileCreated.body());
      JsonNode underway =
          Await.until(
              Duration.ofSeconds(120),
              "a quarter of the file staged",
              () -> view(client, json, fileRun),
              body ->
                  body != null
                      && (body.path("staging").path("rowsStaged").asLong() >= ROWS / 4
                          || "RUNNING".equals(body.path("state").asText())));
      assertEquals("STAGING", underway.path("state").asText(), "cut mid-staging: " + underway);
      link.cut();
      Await.until(
          Duration.ofSeconds(60),
          "the stager unheard of for 3 s and knocking at the database while it is away",
          () -> heartbeatAgeSeconds(db, "million-file/2026-11-29") >= 3 && link.refused() >= 5);
      link.mend();
      JsonNode fileRunning =
          Await.until(
              Duration.ofSeconds(240),
              "the run from the file to be created after the outage",
              () -> view(client, json, fileRun),
              body -> body != null && !"STAGING".equals(body.path("state").asText()));
      double fileSeconds = (System.nanoTime() - fileStarted) / 1e9;

      assertEquals("RUNNING", fileRunning.path("state").asText(), fileRunning.toString());
      assertEquals(ROWS, fileRunning.path("counts").path("total").asLong());
      try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT COUNT(*), COUNT(DISTINCT account_id || ',' || provider_cursor),"
                      + " COUNT(DISTINCT scope_id) FROM run_item")) {
        rs.next();
        assertEquals(2L * ROWS, rs.getLong(1), "both scopes, every row once");
        assertEquals(ROWS, rs.getLong(2), "the same accounts in each");
        assertEquals(2, rs.getLong(3));
      }
      String status = Files.readString(Path.of("/proc/" + node.pid() + "/status"));
      Matcher peak = Pattern.compile("VmHWM:\\s+(\\d+) kB").matcher(status);
      System.out.printf(
          "1M-row upload: %d bytes answered %d after %.1f s, run created after %.1f s;"
              + " 1M rows from a file through a database outage: RUNNING after %.1f s;"
              + " peak RSS %s MiB; largest heap after a GC %s MiB (-Xmx256m)%n",
          Files.size(csv),
          created.statusCode(),
          uploadSeconds,
          createdSeconds,
          fileSeconds,
          peak.find() ? Long.parseLong(peak.group(1)) / 1024 : "?",
          largestHeapAfterGc(dir.resolve("gc.log")));
    } finally {
      node.destroy();
      if (!node.waitFor(30, TimeUnit.SECONDS)) {
        node.destroyForcibly();
      }
      link.close();
    }
  }

  /** How long ago the run's stager last wrote its heartbeat, by the database's clock. */
  private static double heartbeatAgeSeconds(TestDatabases.Target db, String runId) {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "SELECT EXTRACT(EPOCH FROM CURRENT_TIMESTAMP - updated_at) FROM run_staging"
                    + " WHERE run_id = ?")) {
      ps.setString(1, runId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getDouble(1) : 0;
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("reading run_staging past the cut", e);
    }
  }

  private static JsonNode view(HttpClient client, ObjectMapper json, String run) {
    try {
      HttpResponse<String> answer =
          client.send(
              HttpRequest.newBuilder(URI.create(run)).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      return answer.statusCode() == 200 ? json.readTree(answer.body()) : null;
    } catch (Exception e) {
      return null; // the node answers 503 or not at all while the database is away
    }
  }

  /** From -Xlog:gc lines such as "Pause Young (Allocation Failure) 80M->12M(245M) 3.1ms". */
  private static long largestHeapAfterGc(Path gcLog) throws Exception {
    Matcher m = Pattern.compile("->(\\d+)M\\(").matcher(Files.readString(gcLog));
    long max = 0;
    while (m.find()) {
      max = Math.max(max, Long.parseLong(m.group(1)));
    }
    return max;
  }
}

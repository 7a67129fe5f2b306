package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ChildJvm;
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
 */
@ProcessTest
class MillionRowUploadProcessTest {

  private static final int ROWS = 1_000_000;

  @Test
  void aMillionRowUploadIsStagedByANodeWithA256MiBHeap() throws Exception {
    TestDatabases.Target db = TestDatabases.freshPostgres();
    Path dir = Files.createTempDirectory("fencekeeper-upload");
    Path csv = dir.resolve("accounts.csv");
    try (BufferedWriter out = Files.newBufferedWriter(csv)) {
      out.write("accountId,cursor\n");
      for (int i = 0; i < ROWS; i++) {
        out.write("acct-" + i + ",c-" + (i % 7) + "\n");
      }
    }
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
    env.put("FENCEKEEPER_DB_URL", db.url());
    env.put("FENCEKEEPER_DB_USER", db.user());
    env.put("FENCEKEEPER_DB_PASSWORD", db.password());
    env.put("FENCEKEEPER_DATA_DIR", dir.resolve("data").toString());
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
      String status = Files.readString(Path.of("/proc/" + node.pid() + "/status"));
      Matcher peak = Pattern.compile("VmHWM:\\s+(\\d+) kB").matcher(status);
      System.out.printf(
          "1M-row upload: %d bytes answered %d after %.1f s, run created after %.1f s;"
              + " peak RSS %s MiB; largest heap after a GC %s MiB (-Xmx256m)%n",
          Files.size(csv),
          created.statusCode(),
          uploadSeconds,
          createdSeconds,
          peak.find() ? Long.parseLong(peak.group(1)) / 1024 : "?",
          largestHeapAfterGc(dir.resolve("gc.log")));
    } finally {
      node.destroy();
      if (!node.waitFor(30, TimeUnit.SECONDS)) {
        node.destroyForcibly();
      }
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

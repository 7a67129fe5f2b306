package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.api.runs.RunReport;
import io.fencekeeper.archive.ArchiveFixtures;
import io.fencekeeper.archive.ArchiveManifest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fencekeeper archive list | show | audit} read an archive directory the way {@code status},
 * {@code report} and {@code audit} read a node's API, and refuse an archive that is not what its
 * manifest says; {@code prune} without a node says it cannot reach it.
 */
class ArchiveCommandTest {

  static final ObjectMapper JSON = ApiJson.mapper();
  static final String RUN = "nightly/2026-11-29";
  static final String ITEM = RUN + "/acct-1/c-1";

  @TempDir Path dir;
  ArchiveManifest manifest;

  record Result(int exit, String out, String err) {}

  @BeforeEach
  void archive() throws Exception {
    ObjectNode run = JSON.createObjectNode();
    run.put("runId", RUN);
    run.put("state", "PARTIAL");
    run.put("endedAt", "2026-11-30T05:10:00Z");
    run.put("deadline", "2026-11-30T06:00:00Z");
    run.putObject("counts").put("total", 2).put("done", 1).put("failed", 1);
    Map<String, Map<String, Object>> items = new LinkedHashMap<>();
    items.put(ITEM, line(ITEM, "DONE", null));
    items.put(RUN + "/acct-2/c-1", line(RUN + "/acct-2/c-1", "FAILED", "=account closed, it said"));
    manifest =
        ArchiveFixtures.write(
            dir,
            RUN,
            run,
            items,
            Map.of(
                ITEM,
                List.of(
                    ArchiveFixtures.event(
                        1,
                        "2026-11-30T01:00:00Z",
                        "LeaseGranted",
                        Map.of("workerId", "w-1", "token", 1)),
                    ArchiveFixtures.event(
                        2, "2026-11-30T01:00:01Z", "ItemCompleted", Map.of("token", 1)))));
  }

  static Map<String, Object> line(String itemId, String status, String error) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("itemId", itemId);
    fields.put("status", status);
    fields.put("attempt", 1);
    fields.put("maxAttempts", 3);
    fields.put("effect", status.equals("DONE") ? "RECORDED" : "NONE");
    fields.put("outcome", null);
    fields.put("providerReference", null);
    fields.put("lastError", error);
    fields.put("closedReason", null);
    fields.put("token", 1);
    return fields;
  }

  Result run(String... args) {
    PrintStream savedOut = System.out;
    PrintStream savedErr = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      int exit = Main.commandLine().execute(args);
      return new Result(
          exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(savedOut);
      System.setErr(savedErr);
    }
  }

  @Test
  void listShowsEachArchiveFromItsManifest() throws Exception {
    Result list = run("archive", "list", "--archive-dir", dir.toString());
    assertEquals(0, list.exit(), list.err());
    assertTrue(list.out().startsWith(RUN), list.out());
    assertTrue(list.out().contains("items 2  events 2"), list.out());
    assertTrue(list.out().contains("nightly__2026-11-29.jsonl.gz"), list.out());
    Result json = run("archive", "list", "--json", "--archive-dir", dir.toString());
    assertEquals(manifest.sha256(), JSON.readTree(json.out()).get(0).path("sha256").asText());
    Path empty = Files.createDirectories(dir.resolve("empty"));
    assertTrue(
        run("archive", "list", "--archive-dir", empty.toString()).out().startsWith("no archives"));
  }

  @Test
  void showPrintsTheRunAsStatusDoesAndItsReportAsReportDoes() throws Exception {
    Result show = run("archive", "show", RUN, "--archive-dir", dir.toString());
    assertEquals(0, show.exit(), show.err());
    String[] lines = show.out().split("\n");
    assertTrue(lines[0].startsWith(RUN + "  ") && lines[0].contains("PARTIAL"), lines[0]);
    assertTrue(lines[0].contains("done 1/2"), lines[0]);
    assertTrue(lines[1].contains(manifest.sha256()) && lines[1].contains("2 items"), lines[1]);

    Result json = run("archive", "show", RUN, "--json", "--archive-dir", dir.toString());
    assertEquals("PARTIAL", JSON.readTree(json.out()).path("state").asText());

    // the CSV the live report prints: its header, each line, text made safe for a spreadsheet
    Result csv = run("archive", "show", RUN, "--report", "--archive-dir", dir.toString());
    String expected =
        RunReport.csvLine(RunReport.COLUMNS).utf8String()
            + RunReport.csvLine(line(ITEM, "DONE", null)).utf8String()
            + RunReport.csvLine(line(RUN + "/acct-2/c-1", "FAILED", "=account closed, it said"))
                .utf8String();
    assertEquals(expected, csv.out());
    assertTrue(csv.out().contains("\"'=account closed, it said\""), csv.out());
    Result jsonl =
        run(
            "archive",
            "show",
            RUN,
            "--report",
            "--format",
            "jsonl",
            "--archive-dir",
            dir.toString());
    assertEquals(JSON.writeValueAsString(line(ITEM, "DONE", null)), jsonl.out().split("\n")[0]);
  }

  @Test
  void auditPrintsAnItemsTrailAsAuditDoes() throws Exception {
    Result audit = run("archive", "audit", ITEM, "--archive-dir", dir.toString());
    assertEquals(0, audit.exit(), audit.err());
    String[] lines = audit.out().split("\n");
    assertEquals(ITEM, lines[0]);
    assertEquals(3, lines.length, audit.out());
    assertTrue(
        lines[1].contains("LeaseGranted") && lines[1].contains("\"workerId\":\"w-1\""), lines[1]);
    JsonNode json =
        JSON.readTree(
            run("archive", "audit", ITEM, "--json", "--archive-dir", dir.toString()).out());
    assertEquals(ITEM, json.path("itemId").asText());
    assertEquals("ItemCompleted", json.path("events").get(1).path("type").asText());

    Result unknown = run("archive", "audit", RUN + "/acct-9/c-1", "--archive-dir", dir.toString());
    assertEquals(1, unknown.exit());
    assertTrue(unknown.err().contains("has no item"), unknown.err());
    assertEquals(
        64, run("archive", "audit", "not-an-item", "--archive-dir", dir.toString()).exit());
    Result noRun =
        run("archive", "audit", "weekly/2026-11-29/a/c", "--archive-dir", dir.toString());
    assertEquals(1, noRun.exit());
    assertTrue(noRun.err().startsWith("no archive of run weekly/2026-11-29"), noRun.err());
  }

  @Test
  void anArchiveThatIsNotWhatItsManifestSaysIsRefused() throws Exception {
    Path file = dir.resolve(manifest.file());
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length - 20] ^= 0x10;
    Files.write(file, bytes);
    Result show = run("archive", "show", RUN, "--archive-dir", dir.toString());
    assertEquals(1, show.exit());
    assertEquals("", show.out(), "nothing of a damaged archive is printed");
    assertTrue(show.err().contains("does not match its manifest"), show.err());
    assertEquals(1, run("archive", "audit", ITEM, "--archive-dir", dir.toString()).exit());
  }

  @Test
  void pruneWithoutANodeSaysItCannotReachIt() throws Exception {
    int port;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Result prune =
        run(
            "archive",
            "prune",
            "--ended-before",
            "2026-12-01",
            "--url",
            "http://127.0.0.1:" + port);
    assertEquals(1, prune.exit());
    assertTrue(prune.err().startsWith("cannot reach http://127.0.0.1:" + port), prune.err());
    assertEquals(2, run("archive", "prune").exit(), "--ended-before is required");
  }
}

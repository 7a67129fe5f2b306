package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.http.ApiJson;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An archive file appears under its name only once it is whole (docs/archive.md): gzip JSON Lines,
 * the run first and the counts last, with a manifest whose SHA-256 and size are the file's, both
 * readable by their owner only; a writer that does not finish leaves nothing behind.
 */
class ArchiveWriterTest {

  static final ObjectMapper JSON = ApiJson.mapper();
  static final Instant ENDED = Instant.parse("2026-11-30T05:10:00Z");

  @TempDir Path dir;

  static ObjectNode run(String runId) {
    ObjectNode run = JSON.createObjectNode();
    run.put("runId", runId);
    run.put("state", "PARTIAL");
    return run;
  }

  static Map<String, Object> event(long seq, String type) {
    Map<String, Object> event = new LinkedHashMap<>();
    event.put("sequenceNr", seq);
    event.put("at", "2026-11-30T01:00:0" + seq + "Z");
    event.put("type", type);
    event.put("fields", Map.of("token", seq));
    return event;
  }

  /** Writes an archive of {@code items} items with two events each. */
  static ArchiveManifest write(Path dir, String runId, int items) throws Exception {
    try (ArchiveWriter out = ArchiveWriter.start(dir, runId, JSON, run(runId))) {
      for (int i = 0; i < items; i++) {
        String itemId = runId + "/a-" + i + "/c-1";
        out.item(i, itemId, Map.of("itemId", itemId, "status", "DONE"));
        out.event(itemId, event(1, "LeaseGranted"));
        out.event(itemId, event(2, "ItemCompleted"));
      }
      return out.finish("PARTIAL", ENDED, ENDED.plusSeconds(86_400), "pekko://fencekeeper@n1:1");
    }
  }

  @Test
  void aFinishedArchiveIsWholeUnderItsNameWithAManifestThatProvesIt() throws Exception {
    String runId = "nightly/2026-11-29";
    ArchiveManifest manifest = write(dir, runId, 3);
    Path file = dir.resolve("nightly__2026-11-29.jsonl.gz");
    assertEquals(file.getFileName().toString(), manifest.file());
    assertEquals(Files.size(file), manifest.bytes());
    assertEquals(ArchiveReader.sha256(file), manifest.sha256());
    assertEquals(3, manifest.items());
    assertEquals(6, manifest.events());
    assertEquals(1 + 3 + 6 + 1, manifest.lines());
    assertEquals("PARTIAL", manifest.state());
    assertEquals(ENDED, manifest.endedAt());

    List<JsonNode> lines = new ArrayList<>();
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(
                new GZIPInputStream(Files.newInputStream(file)), StandardCharsets.UTF_8))) {
      in.lines().forEach(text -> lines.add(read(text)));
    }
    assertEquals("run", lines.get(0).path("kind").asText());
    assertEquals(ArchiveManifest.FORMAT, lines.get(0).path("format").asInt());
    assertEquals(runId, lines.get(0).path("run").path("runId").asText());
    assertEquals("item", lines.get(1).path("kind").asText());
    assertEquals(0, lines.get(1).path("seq").asInt());
    assertEquals("LeaseGranted", lines.get(2).path("event").path("type").asText());
    JsonNode end = lines.get(lines.size() - 1);
    assertEquals("end", end.path("kind").asText());
    assertEquals(3, end.path("items").asInt());
    assertEquals(6, end.path("events").asInt());

    Path manifestFile = dir.resolve("nightly__2026-11-29.manifest.json");
    assertEquals(manifest, JSON.readValue(manifestFile.toFile(), ArchiveManifest.class));
    for (Path written : List.of(file, manifestFile)) {
      assertEquals(
          "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(written)));
    }
    try (Stream<Path> all = Files.list(dir)) {
      assertEquals(2, all.count(), "no temporary file is left");
    }
  }

  @Test
  void nothingIsVisibleUnderTheArchivesNameUntilItIsFinishedAndAnUnfinishedOneLeavesNothing()
      throws Exception {
    String runId = "nightly/2026-11-29";
    try (ArchiveWriter out = ArchiveWriter.start(dir, runId, JSON, run(runId))) {
      out.item(0, runId + "/a/c", Map.of("status", "DONE"));
      assertFalse(Files.exists(dir.resolve("nightly__2026-11-29.jsonl.gz")));
      assertFalse(Files.exists(dir.resolve("nightly__2026-11-29.manifest.json")));
    }
    try (Stream<Path> all = Files.list(dir)) {
      assertEquals(0, all.count(), "a writer closed unfinished leaves no file");
    }
  }

  @Test
  void theSameRunWrittenTwiceGivesTheSameBytes() throws Exception {
    ArchiveManifest first = write(dir, "nightly/2026-11-29", 4);
    ArchiveManifest second = write(dir, "nightly/2026-11-29", 4);
    assertEquals(first.sha256(), second.sha256(), "a pass that repeats one replaces it alike");
  }

  @Test
  void fileNamesStayInTheDirectory() {
    assertEquals("..__2026-11-29", ArchiveFiles.baseName("../2026-11-29"));
    assertEquals("a.b:c__2026-11-29", ArchiveFiles.baseName("a.b:c/2026-11-29"));
    assertThrows(IllegalArgumentException.class, () -> ArchiveFiles.baseName("a/b/2026-11-29"));
    assertThrows(IllegalArgumentException.class, () -> ArchiveFiles.baseName("no-date"));
    assertTrue(!ArchiveFiles.dataName("../2026-11-29").contains("/"));
  }

  private static JsonNode read(String text) {
    try {
      return JSON.readTree(text);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}

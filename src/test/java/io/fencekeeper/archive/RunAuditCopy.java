package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A run's whole audit as a user reads it: the run view, its report (one line per item) and every
 * item's events; read from the live API, or from the run's archive, so that the two can be
 * compared.
 */
record RunAuditCopy(JsonNode run, List<JsonNode> report, Map<String, List<JsonNode>> events) {

  /** From the node's API: GET the run, its report as JSON lines, each item's audit page by page. */
  static RunAuditCopy fromApi(RetentionTestNode node, String runId) {
    JsonNode run = node.run(runId);
    RetentionTestNode.Answer report =
        node.get("/api/runs/" + RetentionTestNode.seg(runId) + "/report?format=jsonl");
    assertEquals(200, report.status(), report.body());
    List<JsonNode> lines = new ArrayList<>();
    Map<String, List<JsonNode>> events = new LinkedHashMap<>();
    for (String text : report.body().split("\n")) {
      if (text.isBlank()) {
        continue;
      }
      JsonNode line = read(node.json, text);
      lines.add(line);
      String itemId = line.path("itemId").asText();
      List<JsonNode> trail = new ArrayList<>();
      String after = "";
      while (true) {
        RetentionTestNode.Answer page =
            node.get("/api/items/" + RetentionTestNode.seg(itemId) + "/audit?limit=2" + after);
        assertEquals(200, page.status(), page.body());
        page.tree().path("events").forEach(trail::add);
        if (!page.tree().has("next")) {
          break;
        }
        after = "&after=" + page.tree().path("next").asLong();
      }
      events.put(itemId, trail);
    }
    return new RunAuditCopy(run, lines, events);
  }

  /** From the run's archive, once it is proven whole against its manifest. */
  static RunAuditCopy fromArchive(ArchiveReader reader, String runId) throws IOException {
    ArchiveManifest manifest = reader.manifest(runId).orElseThrow();
    reader.verify(manifest);
    JsonNode[] run = new JsonNode[1];
    List<JsonNode> lines = new ArrayList<>();
    Map<String, List<JsonNode>> events = new LinkedHashMap<>();
    reader.lines(
        manifest,
        line -> {
          switch (line.path("kind").asText()) {
            case "run" -> run[0] = line.path("run");
            case "item" -> {
              lines.add(line.path("report"));
              events.put(line.path("itemId").asText(), new ArrayList<>());
            }
            case "event" -> events.get(line.path("itemId").asText()).add(line.path("event"));
            default -> {}
          }
        });
    return new RunAuditCopy(run[0], lines, events);
  }

  private static JsonNode read(ObjectMapper json, String text) {
    try {
      return json.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

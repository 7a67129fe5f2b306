package io.fencekeeper.archive;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.http.ApiJson;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Archives written as retention writes them, for the tests of the commands that read them. */
public final class ArchiveFixtures {

  private ArchiveFixtures() {}

  /**
   * The archive of {@code runId} with its run view {@code run}, and per item its report line and
   * its events ({@code items}: item id to report line, {@code events}: item id to its events).
   */
  public static ArchiveManifest write(
      Path dir,
      String runId,
      ObjectNode run,
      Map<String, Map<String, Object>> items,
      Map<String, List<Map<String, Object>>> events)
      throws Exception {
    try (ArchiveWriter out = ArchiveWriter.start(dir, runId, ApiJson.mapper(), run)) {
      long seq = 0;
      for (var item : items.entrySet()) {
        out.item(seq++, item.getKey(), item.getValue());
        for (Map<String, Object> event : events.getOrDefault(item.getKey(), List.of())) {
          out.event(item.getKey(), event);
        }
      }
      Instant ended = Instant.parse(run.path("endedAt").asText("2026-11-30T05:00:00Z"));
      return out.finish(
          run.path("state").asText(), ended, ended.plusSeconds(86_400), "pekko://fencekeeper@n1:1");
    }
  }

  /** An audit event as the API shows it. */
  public static Map<String, Object> event(long seq, String at, String type, Map<String, ?> fields) {
    Map<String, Object> event = new LinkedHashMap<>();
    event.put("sequenceNr", seq);
    event.put("at", at);
    event.put("type", type);
    event.put("fields", fields);
    return event;
  }
}

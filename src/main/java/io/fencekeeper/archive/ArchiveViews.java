package io.fencekeeper.archive;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.run.RunView;
import java.util.Map;

/**
 * How the HTTP API shows a run, an item's report line and an audit event: an archive holds them
 * exactly so (docs/archive.md). The API implements it and hands it down, so there is one spelling
 * of each, the API's.
 */
public interface ArchiveViews {

  /** The API's JSON spelling (ISO-8601 instants, no class names). */
  ObjectMapper mapper();

  /** The body of {@code GET /api/runs/{runId}}. */
  ObjectNode run(RunView run);

  /** The item's line of {@code GET /api/runs/{runId}/report?format=jsonl}. */
  Map<String, Object> reportLine(RunView run, ItemId itemId, ItemView item);

  /** One element of {@code events} in {@code GET /api/items/{itemId}/audit}. */
  Map<String, Object> auditEvent(ItemAudit.Entry entry);
}

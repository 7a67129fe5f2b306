package io.fencekeeper.api.runs;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.items.ApiViews;
import io.fencekeeper.archive.ArchiveViews;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.governor.GovernorSettings;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The API's own shapes handed to retention, so that an archive holds a run, its report lines and
 * its audit exactly as {@code GET /api/runs/{runId}}, {@code GET /api/runs/{runId}/report} and
 * {@code GET /api/items/{itemId}/audit} show them (docs/archive.md).
 */
public final class ApiArchiveViews implements ArchiveViews {

  private final ObjectMapper mapper;
  private final Supplier<GovernorSettings> governor;

  public ApiArchiveViews(ObjectMapper mapper, Supplier<GovernorSettings> governor) {
    this.mapper = mapper;
    this.governor = governor;
  }

  @Override
  public ObjectMapper mapper() {
    return mapper;
  }

  @Override
  public ObjectNode run(RunView run) {
    return ApiViews.run(mapper, run, ApiViews.GovernorView.of(governor.get(), run.governor()));
  }

  @Override
  public Map<String, Object> reportLine(RunView run, ItemId itemId, ItemView item) {
    return RunReport.fields(run, itemId, item);
  }

  @Override
  public Map<String, Object> auditEvent(ItemAudit.Entry entry) {
    return ApiViews.auditEvent(mapper, entry);
  }
}

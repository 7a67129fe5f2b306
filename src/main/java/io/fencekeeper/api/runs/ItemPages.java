package io.fencekeeper.api.runs;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunItemStore;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * {@code GET /api/runs/{runId}/items}: pages through the run's staged scope in sequence order and
 * reads each item of the page from its entity (the authority on status). A status filter scans at
 * most {@link #MAX_SCAN} rows per request and hands back a {@code nextAfter} cursor, so a request
 * costs a bounded amount of work however large the run is; a sparse status may take several pages
 * with few or no items each.
 */
public final class ItemPages {

  static final int MAX_LIMIT = 500;
  static final int MAX_SCAN = 2000;

  private final RunItemStore queries;
  private final ItemGateway items;
  private final Executor blocking;

  public ItemPages(RunItemStore queries, ItemGateway items, Executor blocking) {
    this.queries = queries;
    this.items = items;
    this.blocking = blocking;
  }

  CompletionStage<Map<String, Object>> page(
      String runId, String scopeId, WorkItem.Status status, int afterSeq, int limit) {
    int scan = status == null ? limit : Math.min(MAX_SCAN, Math.max(limit * 4, 200));
    // DONE is final, so a cached DONE can be skipped when another status is asked for
    boolean skipDone = status != null && status != WorkItem.Status.DONE;
    return CompletableFuture.supplyAsync(
            () -> queries.page(scopeId, afterSeq + 1, scan, skipDone), blocking)
        .thenCompose(
            rows -> {
              String[] runParts = runId.split("/");
              List<CompletableFuture<ItemView>> views = new ArrayList<>(rows.size());
              for (RunItemStore.Row row : rows) {
                ItemId id =
                    ItemId.of(
                        runParts[0], LocalDate.parse(runParts[1]), row.accountId(), row.cursor());
                views.add(
                    items
                        .get(id)
                        .thenApply(reply -> ((WorkItem.Accepted) reply).item())
                        .toCompletableFuture());
              }
              return CompletableFuture.allOf(views.toArray(CompletableFuture[]::new))
                  .thenApply(
                      done -> {
                        List<Map<String, Object>> page = new ArrayList<>();
                        Integer lastSeq = null;
                        for (int i = 0; i < rows.size() && page.size() < limit; i++) {
                          ItemView view = views.get(i).join();
                          lastSeq = rows.get(i).seq();
                          if (status == null || view.status() == status) {
                            Map<String, Object> entry = new LinkedHashMap<>();
                            entry.put("seq", rows.get(i).seq());
                            entry.put("item", view);
                            page.add(entry);
                          }
                        }
                        boolean more = rows.size() == scan || page.size() == limit;
                        Map<String, Object> body = new LinkedHashMap<>();
                        body.put("runId", runId);
                        body.put("items", page);
                        body.put("nextAfter", more && lastSeq != null ? lastSeq : null);
                        return body;
                      });
            });
  }
}

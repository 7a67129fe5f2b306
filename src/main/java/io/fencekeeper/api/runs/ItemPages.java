package io.fencekeeper.api.runs;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunView;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * {@code GET /api/runs/{runId}/items}: pages through the run's staged scope in sequence order
 * (keyset: {@code seq > after}) and shows each item of the page as its journaled events make it
 * ({@code items}: many items in one read, no entity woken). A status filter reads a window of at
 * most {@link #MAX_SCAN} sequence numbers per request and hands back a {@code nextAfter} cursor, so
 * a request costs a bounded amount of work however large the run is and however its statuses lie; a
 * sparse status may take several pages with few or no items each.
 */
public final class ItemPages {

  static final int MAX_LIMIT = 500;
  static final int MAX_SCAN = 2000;

  private final RunItemStore queries;
  private final Function<List<ItemId>, List<ItemView>> items;
  private final Executor blocking;

  /**
   * {@code items}: the items as their journals make them, in the order asked (at most {@link
   * #MAX_LIMIT} at once).
   */
  public ItemPages(
      RunItemStore queries, Function<List<ItemId>, List<ItemView>> items, Executor blocking) {
    this.queries = queries;
    this.items = items;
    this.blocking = blocking;
  }

  CompletionStage<Map<String, Object>> page(
      RunView run, WorkItem.Status status, int afterSeq, int limit) {
    return CompletableFuture.supplyAsync(() -> read(run, status, afterSeq, limit), blocking);
  }

  private Map<String, Object> read(RunView run, WorkItem.Status status, int afterSeq, int limit) {
    int from = afterSeq + 1;
    List<RunItemStore.Row> rows;
    // where the next page starts when this one is not full: after the rows this one read
    Integer nextIfNotFull;
    if (status == null) {
      rows = queries.page(run.scopeId(), from, limit);
      nextIfNotFull = null;
    } else {
      // seqs are 0 .. total - 1: the window never reads past the scope's end
      int scan = Math.min(MAX_SCAN, Math.max(limit * 4, 200));
      long total = run.counts().total();
      int to = (int) Math.max(from, Math.min(total, (long) from + scan));
      // DONE is final, so a cached DONE can be skipped when another status is asked for
      boolean skipDone = status != WorkItem.Status.DONE;
      rows = to > from ? queries.window(run.scopeId(), from, to, skipDone) : List.of();
      nextIfNotFull = to < total ? to - 1 : null;
    }
    LocalDate date = LocalDate.parse(run.businessDate());
    List<Map<String, Object>> page = new ArrayList<>();
    Integer lastSeq = null;
    for (int start = 0; start < rows.size() && page.size() < limit; start += MAX_LIMIT) {
      List<RunItemStore.Row> chunk = rows.subList(start, Math.min(rows.size(), start + MAX_LIMIT));
      List<ItemView> views =
          items.apply(
              chunk.stream()
                  .map(row -> ItemId.of(run.job(), date, row.accountId(), row.cursor()))
                  .toList());
      for (int i = 0; i < chunk.size() && page.size() < limit; i++) {
        ItemView view = views.get(i);
        lastSeq = chunk.get(i).seq();
        if (status == null || view.status() == status) {
          Map<String, Object> entry = new LinkedHashMap<>();
          entry.put("seq", lastSeq);
          entry.put("item", view);
          page.add(entry);
        }
      }
    }
    Integer next = page.size() == limit ? lastSeq : nextIfNotFull;
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("runId", run.runId());
    body.put("items", page);
    body.put("nextAfter", next);
    return body;
  }
}

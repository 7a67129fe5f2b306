package io.fencekeeper.api.runs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.run.Counts;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A page of a run's items costs what the page shows, not what the run holds: the same items are
 * read for a page of a run of 2,000 items as of one of 20,000, and a status filter on a night that
 * is nearly all DONE reads one window of sequence numbers per request instead of walking to the
 * scope's end. Counted by what the page asks of the items' journals (no timing).
 */
class ItemPagesTest {

  @TempDir Path dataDir;

  private JournalDatabase db;
  private RunItemStore store;
  // what each item's journal says, by account: the fake journal the pages read
  private final Map<String, WorkItem.Status> statuses = new HashMap<>();
  private final AtomicInteger itemsRead = new AtomicInteger();
  private ItemPages pages;

  @BeforeEach
  void start() {
    TestDatabases.Target target = TestDatabases.h2File(dataDir);
    db =
        new JournalDatabase(
            JournalDatabase.Kind.H2, target.url(), target.user(), target.password(), 2);
    db.migrate();
    store = new RunItemStore(db);
    pages = new ItemPages(store, this::read, Runnable::run);
  }

  @AfterEach
  void stop() {
    store.close();
  }

  private List<ItemView> read(List<ItemId> ids) {
    itemsRead.addAndGet(ids.size());
    List<ItemView> views = new ArrayList<>();
    for (ItemId id : ids) {
      WorkItem.Status status = statuses.getOrDefault(id.accountId(), WorkItem.Status.PENDING);
      views.add(
          new ItemView(id.value(), status, null, 1, null, 1, 5, null, null, null, null, null, "k"));
    }
    return views;
  }

  /**
   * A run of {@code size} items, every one DONE (in the cache and in its journal) but those named.
   */
  private RunView night(String scope, int size, Map<Integer, WorkItem.Status> open) {
    List<AccountCursor> accounts = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      accounts.add(new AccountCursor(scope + "-" + i, "c1"));
    }
    store.stage(scope, 0, accounts);
    List<RunItemStore.StatusWrite> done = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      WorkItem.Status status = open.getOrDefault(i, WorkItem.Status.DONE);
      statuses.put(scope + "-" + i, status);
      if (status == WorkItem.Status.DONE) {
        done.add(new RunItemStore.StatusWrite(i, RunItemStore.DONE));
      }
    }
    store.markStatuses(scope, done);
    store.refreshStatistics();
    return new RunView(
        "night/2026-12-01",
        "night",
        "2026-12-01",
        RunState.RUNNING,
        Instant.parse("2026-12-01T01:00:00Z"),
        Instant.parse("2026-12-01T07:00:00Z"),
        null,
        null,
        5,
        0,
        0,
        new Counts(size, open.size(), 0, size - open.size(), 0, 0),
        0,
        0,
        null,
        0,
        0,
        0,
        0,
        0,
        0,
        Map.of(),
        null,
        null,
        scope,
        "default",
        null,
        null);
  }

  private Map<String, Object> page(RunView run, WorkItem.Status status, int after, int limit)
      throws Exception {
    itemsRead.set(0);
    return pages.page(run, status, after, limit).toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> items(Map<String, Object> page) {
    return (List<Map<String, Object>>) page.get("items");
  }

  @Test
  void aPageReadsAsManyItemsWhateverTheRunsSize() throws Exception {
    RunView small = night("small", 2_000, Map.of());
    RunView large = night("large", 20_000, Map.of());

    Map<String, Object> first = page(small, null, -1, 100);
    int smallRead = itemsRead.get();
    Map<String, Object> deep = page(large, null, 15_000, 100);
    int largeRead = itemsRead.get();

    assertEquals(100, items(first).size());
    assertEquals(99, first.get("nextAfter"));
    assertEquals(100, items(deep).size());
    assertEquals(15_001, items(deep).get(0).get("seq"), "keyset: the page starts after 'after'");
    assertEquals(15100, deep.get("nextAfter"));
    assertEquals(100, smallRead, "a page reads its own items, no more");
    assertEquals(smallRead, largeRead, "nor more for a run ten times as large");
  }

  @Test
  void aStatusFilterOnANightOfDoneItemsReadsOneWindowPerRequest() throws Exception {
    int size = 10_000;
    RunView run = night("nearly-done", size, Map.of(size - 3, WorkItem.Status.FAILED));

    Map<String, Object> first = page(run, WorkItem.Status.FAILED, -1, 100);
    assertTrue(items(first).isEmpty());
    int window = Math.max(100 * 4, 200);
    assertEquals(
        window - 1,
        first.get("nextAfter"),
        "the next request goes on after the window this one read, not after the scope's end");
    assertEquals(0, itemsRead.get(), "DONE in the cache is final: no item's journal is read");

    // a client follows nextAfter to the failed item, each request one window
    Object after = first.get("nextAfter");
    List<Map<String, Object>> found = new ArrayList<>();
    int requests = 1;
    while (after != null) {
      Map<String, Object> next = page(run, WorkItem.Status.FAILED, (Integer) after, 100);
      assertTrue(itemsRead.get() <= window, "a request reads at most its window");
      found.addAll(items(next));
      after = next.get("nextAfter");
      requests++;
    }
    assertEquals(1, found.size());
    assertEquals(size - 3, found.get(0).get("seq"));
    assertEquals((size + window - 1) / window, requests, "the windows cover the scope once");
  }

  @Test
  void aStatusFilterFillsItsPageFromTheJournalsAndStopsAtTheLimit() throws Exception {
    Map<Integer, WorkItem.Status> open = new HashMap<>();
    for (int seq = 10; seq < 30; seq++) {
      open.put(seq, seq % 2 == 0 ? WorkItem.Status.PENDING : WorkItem.Status.FAILED);
    }
    RunView run = night("mixed", 300, open);

    Map<String, Object> page = page(run, WorkItem.Status.FAILED, -1, 5);
    List<Integer> seqs = items(page).stream().map(entry -> (Integer) entry.get("seq")).toList();
    assertEquals(List.of(11, 13, 15, 17, 19), seqs);
    assertEquals(19, page.get("nextAfter"));
    assertEquals(20, itemsRead.get(), "only the items not DONE in the cache were read");

    Map<String, Object> rest = page(run, WorkItem.Status.FAILED, 19, 100);
    assertEquals(5, items(rest).size());
    assertNull(rest.get("nextAfter"), "the window reached the scope's end");
  }
}

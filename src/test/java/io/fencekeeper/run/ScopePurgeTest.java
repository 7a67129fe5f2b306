package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An archived run's rows go in batches, each one transaction: its items' events with their tags,
 * their snapshots and their run_item rows, counted on the run's record, and nothing of another run;
 * a batch after the last finds nothing. On both databases.
 */
class ScopePurgeTest {

  @TempDir Path dataDir;

  @BeforeAll
  static void mapper() {
    EndedRunsTest.mapper(); // the node's JSON for run_record
  }

  @AfterAll
  static void stop() {
    EndedRunsTest.stop();
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgresql"})
  void batchesDeleteTheRunsItemsTheirEventsTagsAndSnapshotsAndCountThem(String kind)
      throws Exception {
    TestDatabases.Target target =
        kind.equals("h2") ? TestDatabases.h2File(dataDir) : TestDatabases.freshPostgres();
    try (RunItemStore store = new RunItemStore(TestDatabases.migrated(target));
        Connection c =
            DriverManager.getConnection(target.url(), target.user(), target.password())) {
      EndedRuns ended = EndedRuns.on(store, EndedRunsTest.json);
      RunRecord pruned = staged(store, ended, c, "nightly", 3);
      RunRecord kept = staged(store, ended, c, "weekly", 2);
      ScopePurge purge = ScopePurge.on(store);

      ScopePurge.Batch first = purge.deleteBatch(pruned, 2);
      // two items: 2 run_item rows, 2 x 3 events, 2 tags, the snapshot of the first item
      assertEquals(new ScopePurge.Batch(2, 6, 2, 1), first);
      assertEquals(
          1,
          count(c, "SELECT count(*) FROM run_item WHERE scope_id = ?", pruned.scopeId()),
          "left");
      ScopePurge.Batch second = purge.deleteBatch(pruned, 2);
      assertEquals(new ScopePurge.Batch(1, 3, 1, 0), second);
      assertEquals(new ScopePurge.Batch(0, 0, 0, 0), purge.deleteBatch(pruned, 2));
      assertEquals(0, journalRows(c, pruned));
      assertEquals(
          first.rows() + second.rows(),
          count(c, "SELECT rows_deleted FROM run_record WHERE run_id = ?", pruned.runId()));

      assertEquals(2 * 3 + 2 + 1, journalRows(c, kept), "the other run is untouched");
      assertEquals(2, count(c, "SELECT count(*) FROM run_item WHERE scope_id = ?", kept.scopeId()));
      assertEquals(kind.equals("postgresql"), purge.vacuum());

      // a staging row of the same run id for another scope (a create being staged) stays
      stagingRow(c, pruned, "another-scope");
      assertEquals(0, purge.deleteStaging(pruned));
      c.createStatement().executeUpdate("DELETE FROM run_staging");
      stagingRow(c, pruned, pruned.scopeId());
      assertEquals(1, purge.deleteStaging(pruned), "the run's own leftover goes");
    }
  }

  private static void stagingRow(Connection c, RunRecord run, String scopeId) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO run_staging (run_id, scope_id, request_digest, job, business_date,"
                + " deadline, max_attempts, max_failed_items, scope_kind, node, state)"
                + " VALUES (?, ?, 'digest', 'nightly', '2026-11-29', '2026-11-30T06:00:00Z', 3, 0,"
                + " 'inline', 'node', 'FAILED')")) {
      ps.setString(1, run.runId());
      ps.setString(2, scopeId);
      ps.executeUpdate();
    }
  }

  /**
   * A filed run of {@code items} items staged in run_item, each with three events (the second
   * tagged) and the first item with a snapshot, written as the journal writes them.
   */
  private static RunRecord staged(
      RunItemStore store, EndedRuns ended, Connection c, String job, int items) throws Exception {
    RunRecord run = EndedRunsTest.ended(job, "2026-11-29", RunState.SUCCEEDED, 0);
    List<AccountCursor> accounts =
        java.util.stream.IntStream.range(0, items)
            .mapToObj(i -> new AccountCursor("acct-" + i, "c"))
            .toList();
    store.stage(run.scopeId(), 0, accounts);
    ended.file(run, RunSignals.NONE);
    for (AccountCursor account : accounts) {
      ItemId id = run.itemId(account.accountId(), account.cursor());
      String pid = WorkItem.persistenceId(id).id();
      for (int seq = 1; seq <= 3; seq++) {
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO \"event_journal\" (\"persistence_id\", \"sequence_number\","
                    + " \"writer\", \"write_timestamp\", \"adapter_manifest\","
                    + " \"event_ser_id\", \"event_ser_manifest\", \"event_payload\")"
                    + " VALUES (?, ?, 'writer', 0, '', 1, 'manifest', ?)")) {
          ps.setString(1, pid);
          ps.setLong(2, seq);
          ps.setBytes(3, new byte[] {1, 2, 3});
          ps.executeUpdate();
        }
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO \"event_tag\" (\"event_id\", \"tag\") SELECT \"ordering\","
                  + " 'item-signal' FROM \"event_journal\" WHERE \"persistence_id\" = ?"
                  + " AND \"sequence_number\" = 2")) {
        ps.setString(1, pid);
        ps.executeUpdate();
      }
      if (account.accountId().equals("acct-0")) {
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO \"snapshot\" (\"persistence_id\", \"sequence_number\","
                    + " \"created\", \"snapshot_ser_id\", \"snapshot_ser_manifest\","
                    + " \"snapshot_payload\") VALUES (?, 3, 0, 1, 'manifest', ?)")) {
          ps.setString(1, pid);
          ps.setBytes(2, new byte[] {4});
          ps.executeUpdate();
        }
      }
    }
    return run;
  }

  /** The run's rows in the journal, its tags and the snapshots. */
  private static long journalRows(Connection c, RunRecord run) throws Exception {
    String like = "WorkItem|" + run.runId() + "/%";
    return count(c, "SELECT count(*) FROM \"event_journal\" WHERE \"persistence_id\" LIKE ?", like)
        + count(
            c,
            "SELECT count(*) FROM \"event_tag\" t JOIN \"event_journal\" j"
                + " ON j.\"ordering\" = t.\"event_id\" WHERE j.\"persistence_id\" LIKE ?",
            like)
        + count(c, "SELECT count(*) FROM \"snapshot\" WHERE \"persistence_id\" LIKE ?", like);
  }

  private static long count(Connection c, String sql, String param) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, param);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}

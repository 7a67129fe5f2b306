package io.fencekeeper.run;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencekeeper.dispatch.ScopeRows;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.ScopeSink;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToIntFunction;

/**
 * The {@code run_item} table: a run's expanded scope, staged once at creation with each item's
 * shard, paged by every node's dispatcher shard by shard ({@link ScopeRows}), and counted by the
 * coordinator. All SQL of the run scope lives here. Calls block: callers run them on the blocking
 * dispatcher, never on an actor thread.
 */
public final class RunItemStore implements ScopeRows, AutoCloseable {

  private final HikariDataSource dataSource;
  private final boolean postgres;

  public RunItemStore(JournalDatabase database) {
    this.postgres = database.kind() == JournalDatabase.Kind.POSTGRESQL;
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(database.url());
    config.setUsername(database.user());
    config.setPassword(database.password());
    config.setMaximumPoolSize(3);
    config.setMinimumIdle(1);
    config.setPoolName("fencekeeper-run-items");
    if (postgres) {
      // staging inserts its batches as multi-row INSERTs (as the journal does)
      config.addDataSourceProperty("reWriteBatchedInserts", "true");
    }
    // EndedRuns holds a row lock inside a transaction: a stopped node must not keep it
    database.sessionSetupSql().ifPresent(config::setConnectionInitSql);
    this.dataSource = new HikariDataSource(config);
  }

  /**
   * The pool, for the other run tables written while staging ({@link StagingTable}), and for reads
   * of the journal's tables, which live in the same database (retention's deletes, the items of a
   * page: {@code item/ItemTrails}).
   */
  public javax.sql.DataSource dataSource() {
    return dataSource;
  }

  boolean isPostgres() {
    return postgres;
  }

  /**
   * Appends a batch of the scope, numbering from {@code firstSeq}, every item in shard 0: for tests
   * of the table alone (no node pages a shard its items are not really in).
   */
  public void stage(String scopeId, int firstSeq, List<AccountCursor> accounts) {
    stage(scopeId, firstSeq, accounts, account -> 0);
  }

  /** Appends a batch of the scope, numbering from {@code firstSeq}. */
  public void stage(
      String scopeId,
      int firstSeq,
      List<AccountCursor> accounts,
      ToIntFunction<AccountCursor> shardOf) {
    String sql =
        "INSERT INTO run_item (scope_id, seq, account_id, provider_cursor, shard)"
            + " VALUES (?, ?, ?, ?, ?)";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int seq = firstSeq;
      for (AccountCursor account : accounts) {
        ps.setString(1, scopeId);
        ps.setInt(2, seq++);
        ps.setString(3, account.accountId());
        ps.setString(4, account.cursor());
        ps.setInt(5, shardOf.applyAsInt(account));
        ps.addBatch();
      }
      ps.executeBatch();
    } catch (SQLException e) {
      throw new IllegalStateException("could not stage the scope of a run: " + e.getMessage(), e);
    }
  }

  /**
   * Appends a batch of the scope, numbering from {@code firstSeq}, and skips every account already
   * staged under {@code scopeId} (earlier or in this batch): the unique index on (scope, account,
   * cursor) makes a repeat impossible, this insert makes it visible instead of failing. Answers the
   * positions of the skipped accounts.
   */
  public List<Long> stageNew(
      String scopeId,
      int firstSeq,
      List<ScopeSink.Positioned> accounts,
      ToIntFunction<AccountCursor> shardOf) {
    String sql =
        "INSERT INTO run_item (scope_id, seq, account_id, provider_cursor, source_position, shard)"
            + " SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM run_item"
            + " WHERE scope_id = ? AND account_id = ? AND provider_cursor = ?)";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int seq = firstSeq;
      for (ScopeSink.Positioned positioned : accounts) {
        AccountCursor account = positioned.account();
        ps.setString(1, scopeId);
        ps.setInt(2, seq++);
        ps.setString(3, account.accountId());
        ps.setString(4, account.cursor());
        ps.setLong(5, positioned.position());
        ps.setInt(6, shardOf.applyAsInt(account));
        ps.setString(7, scopeId);
        ps.setString(8, account.accountId());
        ps.setString(9, account.cursor());
        ps.addBatch();
      }
      int[] inserted = ps.executeBatch();
      List<Long> repeats = new ArrayList<>();
      for (int i = 0; i < inserted.length; i++) {
        if (inserted[i] == 0) {
          repeats.add(accounts.get(i).position());
        }
      }
      return repeats;
    } catch (SQLException e) {
      throw new IllegalStateException("could not stage the scope of a run: " + e.getMessage(), e);
    }
  }

  /** Where a staged account came from (see {@link #stageNew}); -1 if it is not staged. */
  public long sourcePosition(String scopeId, AccountCursor account) {
    String sql =
        "SELECT source_position FROM run_item"
            + " WHERE scope_id = ? AND account_id = ? AND provider_cursor = ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, scopeId);
      ps.setString(2, account.accountId());
      ps.setString(3, account.cursor());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not look the item up: " + e.getMessage(), e);
    }
  }

  /**
   * Tells the database's planner about a scope just staged. Without it PostgreSQL keeps planning
   * run_item statements with statistics from before the scope existed; the dispatcher's batched
   * status UPDATE, planned generically while the table was small, then scanned the whole table per
   * row (bench: 12 s of PostgreSQL CPU for a 30,000-item run staged after a 2,000-item one).
   */
  public void refreshStatistics() {
    if (!postgres) {
      return; // H2 plans each statement with current row counts
    }
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("ANALYZE run_item");
    } catch (SQLException e) {
      throw new IllegalStateException("could not analyze run_item: " + e.getMessage(), e);
    }
  }

  /** Removes a staged scope that did not become a run (duplicate, conflict, bad input). */
  public void discard(String scopeId) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("DELETE FROM run_item WHERE scope_id = ?")) {
      ps.setString(1, scopeId);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("could not discard staged scope " + scopeId, e);
    }
  }

  /** Up to {@code limit} items with {@code seq >= fromSeq}, in order. */
  public List<Row> page(String scopeId, int fromSeq, int limit) {
    return rows(
        "SELECT seq, account_id, provider_cursor, status FROM run_item"
            + " WHERE scope_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
        scopeId,
        fromSeq,
        limit);
  }

  /**
   * The items with {@code fromSeq <= seq < toSeq}, in order; {@code skipDone} leaves out items
   * whose cached status is DONE (final, so the cache can be trusted for it). The range bounds what
   * is read, whatever the statuses: a filter on a run where nearly everything is DONE must not walk
   * the index to the end of the scope to fill its page.
   */
  public List<Row> window(String scopeId, int fromSeq, int toSeq, boolean skipDone) {
    return rows(
        "SELECT seq, account_id, provider_cursor, status FROM run_item"
            + " WHERE scope_id = ? AND seq >= ? AND seq < ?"
            + (skipDone ? " AND status <> " + DONE : "")
            + " ORDER BY seq",
        scopeId,
        fromSeq,
        toSeq);
  }

  @Override
  public List<Row> pageShard(String scopeId, int shard, int fromSeq, int limit) {
    return rows(
        "SELECT seq, account_id, provider_cursor, status FROM run_item"
            + " WHERE scope_id = ? AND shard = ? AND seq >= ? ORDER BY seq LIMIT ?",
        scopeId,
        shard,
        fromSeq,
        limit);
  }

  /**
   * Up to {@code limit} items with {@code seq >= fromSeq} whose cached status is not DONE, FAILED
   * or CLOSED, in order: what the close sweep of a stopping run may still have to close.
   */
  public List<Row> pageOpen(String scopeId, int fromSeq, int limit) {
    return rows(
        "SELECT seq, account_id, provider_cursor, status FROM run_item"
            + " WHERE scope_id = ? AND seq >= ? AND status NOT IN ("
            + DONE
            + ", "
            + FAILED
            + ", "
            + CLOSED
            + ") ORDER BY seq LIMIT ?",
        scopeId,
        fromSeq,
        limit);
  }

  private List<Row> rows(String sql, String scopeId, int... params) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, scopeId);
      for (int i = 0; i < params.length; i++) {
        ps.setInt(i + 2, params[i]);
      }
      List<Row> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new Row(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getShort(4)));
        }
      }
      return rows;
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the scope of a run: " + e.getMessage(), e);
    }
  }

  /**
   * A run's items per shard, and the first item of each shard (the coordinator wakes a shard that
   * no node hosts by asking that item: docs/design.md, "Dispatch on every node").
   */
  public record ShardFigures(Map<Integer, Long> totals, Map<Integer, Row> firstItems) {}

  public ShardFigures shardFigures(String scopeId) {
    Map<Integer, Long> totals = new TreeMap<>();
    Map<Integer, Integer> firstSeqs = new TreeMap<>();
    String sql = "SELECT shard, COUNT(*), MIN(seq) FROM run_item WHERE scope_id = ? GROUP BY shard";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, scopeId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          totals.put(rs.getInt(1), rs.getLong(2));
          firstSeqs.put(rs.getInt(1), rs.getInt(3));
        }
      }
      Map<Integer, Row> first = new TreeMap<>();
      try (PreparedStatement items =
          c.prepareStatement(
              "SELECT seq, account_id, provider_cursor, status FROM run_item"
                  + " WHERE scope_id = ? AND seq = ANY(?)")) {
        Array seqs = c.createArrayOf("INTEGER", firstSeqs.values().toArray());
        try {
          items.setString(1, scopeId);
          items.setArray(2, seqs);
          Map<Integer, Integer> shardOfSeq = new TreeMap<>();
          firstSeqs.forEach((shard, seq) -> shardOfSeq.put(seq, shard));
          try (ResultSet rs = items.executeQuery()) {
            while (rs.next()) {
              Row row = new Row(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getShort(4));
              first.put(shardOfSeq.get(row.seq()), row);
            }
          }
        } finally {
          seqs.free();
        }
      }
      return new ShardFigures(totals, first);
    } catch (SQLException e) {
      throw new IllegalStateException("could not count a run's shards: " + e.getMessage(), e);
    }
  }

  /**
   * Gives every item of a scope staged before items had their shard in {@code run_item} (a run that
   * was running across the upgrade) its shard, so the nodes that host it find it.
   */
  public int fillMissingShards(String scopeId, ToIntFunction<Row> shardOf) {
    int filled = 0;
    while (true) {
      List<Row> rows =
          rows(
              "SELECT seq, account_id, provider_cursor, status FROM run_item"
                  + " WHERE scope_id = ? AND shard IS NULL ORDER BY seq LIMIT ?",
              scopeId,
              PAGE_TO_FILL);
      if (rows.isEmpty()) {
        return filled;
      }
      try (Connection c = dataSource.getConnection();
          PreparedStatement ps =
              c.prepareStatement("UPDATE run_item SET shard = ? WHERE scope_id = ? AND seq = ?")) {
        for (Row row : rows) {
          ps.setInt(1, shardOf.applyAsInt(row));
          ps.setString(2, scopeId);
          ps.setInt(3, row.seq());
          ps.addBatch();
        }
        ps.executeBatch();
      } catch (SQLException e) {
        throw new IllegalStateException("could not fill in shards: " + e.getMessage(), e);
      }
      filled += rows.size();
    }
  }

  private static final int PAGE_TO_FILL = 1000;

  /** How many of a run's items have each cached status: a stopped or settled run's final count. */
  public Map<Short, Long> statusCounts(String scopeId) {
    Map<Short, Long> counts = new TreeMap<>();
    String sql = "SELECT status, COUNT(*) FROM run_item WHERE scope_id = ? GROUP BY status";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, scopeId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          counts.put(rs.getShort(1), rs.getLong(2));
        }
      }
      return counts;
    } catch (SQLException e) {
      throw new IllegalStateException("could not count a run's items: " + e.getMessage(), e);
    }
  }

  /** Whether the staged scope contains this account and cursor (indexed, see V3 and V4). */
  public boolean contains(String scopeId, String accountId, String cursor) {
    String sql =
        "SELECT 1 FROM run_item WHERE scope_id = ? AND account_id = ? AND provider_cursor = ?"
            + " FETCH FIRST 1 ROWS ONLY";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, scopeId);
      ps.setString(2, accountId);
      ps.setString(3, cursor);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not look the item up: " + e.getMessage(), e);
    }
  }

  /**
   * Caches terminal statuses: one UPDATE per status for the whole batch ({@code seq = ANY(?)}), not
   * one per item, so a run of a million items does not cost the database a million statements.
   */
  @Override
  public void markStatuses(String scopeId, List<StatusWrite> writes) {
    if (writes.isEmpty()) {
      return;
    }
    // the last status of an item wins: a batch may hold FAILED and, later, DONE for one item
    Map<Integer, Short> last = new LinkedHashMap<>();
    for (StatusWrite write : writes) {
      last.put(write.seq(), write.status());
    }
    Map<Short, List<Integer>> byStatus = new TreeMap<>();
    last.forEach(
        (seq, status) -> byStatus.computeIfAbsent(status, s -> new ArrayList<>()).add(seq));
    String sql = "UPDATE run_item SET status = ? WHERE scope_id = ? AND seq = ANY(?)";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (Map.Entry<Short, List<Integer>> entry : byStatus.entrySet()) {
        Array seqs = c.createArrayOf("INTEGER", entry.getValue().toArray());
        try {
          ps.setShort(1, entry.getKey());
          ps.setString(2, scopeId);
          ps.setArray(3, seqs);
          ps.executeUpdate();
        } finally {
          seqs.free();
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not cache item statuses: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    dataSource.close();
  }
}

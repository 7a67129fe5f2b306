package io.fencekeeper.run;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
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
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code run_item} table: a run's expanded scope, staged once at creation and paged by the
 * dispatcher. All SQL of the run scope lives here. Calls block: callers run them on the blocking
 * dispatcher, never on an actor thread.
 */
public final class RunItemStore implements AutoCloseable {

  /** Terminal statuses cached for recovery; 0 means "ask the item". */
  public static final short UNKNOWN = 0;

  public static final short DONE = 2;
  public static final short FAILED = 3;
  public static final short CLOSED = 4;

  /** One staged item of a run's scope. */
  public record Row(int seq, String accountId, String cursor, short status) {}

  /** A terminal status to cache for the item at {@code seq}. */
  public record StatusWrite(int seq, short status) {}

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
    this.dataSource = new HikariDataSource(config);
  }

  /** The pool, for the other run tables written while staging ({@link StagingTable}). */
  javax.sql.DataSource dataSource() {
    return dataSource;
  }

  /** Appends a batch of the scope, numbering from {@code firstSeq}. */
  public void stage(String scopeId, int firstSeq, List<AccountCursor> accounts) {
    String sql =
        "INSERT INTO run_item (scope_id, seq, account_id, provider_cursor) VALUES (?, ?, ?, ?)";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int seq = firstSeq;
      for (AccountCursor account : accounts) {
        ps.setString(1, scopeId);
        ps.setInt(2, seq++);
        ps.setString(3, account.accountId());
        ps.setString(4, account.cursor());
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
  public List<Long> stageNew(String scopeId, int firstSeq, List<ScopeSink.Positioned> accounts) {
    String sql =
        "INSERT INTO run_item (scope_id, seq, account_id, provider_cursor, source_position)"
            + " SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM run_item"
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
        ps.setString(6, scopeId);
        ps.setString(7, account.accountId());
        ps.setString(8, account.cursor());
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
    return page(scopeId, fromSeq, limit, false);
  }

  /**
   * Up to {@code limit} items with {@code seq >= fromSeq}, in order; {@code skipDone} leaves out
   * items whose cached status is DONE (final, so the cache can be trusted for it).
   */
  public List<Row> page(String scopeId, int fromSeq, int limit, boolean skipDone) {
    String sql =
        "SELECT seq, account_id, provider_cursor, status FROM run_item"
            + " WHERE scope_id = ? AND seq >= ?"
            + (skipDone ? " AND status <> " + DONE : "")
            + " ORDER BY seq LIMIT ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, scopeId);
      ps.setInt(2, fromSeq);
      ps.setInt(3, limit);
      List<Row> rows = new ArrayList<>(limit);
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
  public void markStatuses(String scopeId, List<StatusWrite> writes) {
    if (writes.isEmpty()) {
      return;
    }
    Map<Short, List<Integer>> byStatus = new TreeMap<>();
    for (StatusWrite write : writes) {
      byStatus.computeIfAbsent(write.status(), s -> new ArrayList<>()).add(write.seq());
    }
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

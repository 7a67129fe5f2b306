package io.fencekeeper.api;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencekeeper.node.JournalDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Read-only queries of the API over the {@code run_item} table (a run's staged scope): paging a
 * run's items by sequence number and checking that an item belongs to a run. It never writes: the
 * table belongs to the run package. Calls block; callers run them on the API's blocking pool.
 *
 * <p>Limitation: {@code run_item.status} only caches terminal statuses, so a status filter is
 * decided by asking the items of each scanned page (see {@link ItemPages}); and the membership
 * check scans the rows of one scope until the table gets an index on {@code (scope_id, account_id,
 * provider_cursor)}.
 */
final class RunItemQueries implements AutoCloseable {

  static final short CACHED_DONE = 2;

  /** One staged item of a run's scope. */
  record Row(int seq, String accountId, String cursor, short cachedStatus) {}

  private final HikariDataSource dataSource;

  RunItemQueries(JournalDatabase database) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(database.url());
    config.setUsername(database.user());
    config.setPassword(database.password());
    config.setMaximumPoolSize(2);
    config.setMinimumIdle(0);
    config.setReadOnly(true);
    config.setPoolName("fencekeeper-api-reads");
    this.dataSource = new HikariDataSource(config);
  }

  /** Up to {@code limit} rows with {@code seq > afterSeq}, in order; optionally without DONE. */
  List<Row> page(String scopeId, int afterSeq, int limit, boolean skipCachedDone) {
    String sql =
        "SELECT seq, account_id, provider_cursor, status FROM run_item WHERE scope_id = ? AND seq > ?"
            + (skipCachedDone ? " AND status <> " + CACHED_DONE : "")
            + " ORDER BY seq LIMIT ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, scopeId);
      ps.setInt(2, afterSeq);
      ps.setInt(3, limit);
      List<Row> rows = new ArrayList<>(limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new Row(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getShort(4)));
        }
      }
      return rows;
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the items of a run: " + e.getMessage(), e);
    }
  }

  /** Whether the scope contains the account and cursor. */
  boolean contains(String scopeId, String accountId, String cursor) {
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

  @Override
  public void close() {
    dataSource.close();
  }
}

package io.fencekeeper.run;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencekeeper.dispatch.ScopeRows;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.run.scope.AccountCursor;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.ToIntFunction;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

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
      // batched INSERTs (a test's stage, the status cache) go as multi-row INSERTs
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

  /** A row of a scope being staged: its seq, where it came from, the account and its shard. */
  public record NewRow(int seq, long position, AccountCursor account, int shard) {}

  private static final String COPY_COLUMNS =
      "run_item (scope_id, seq, account_id, provider_cursor, source_position, shard)";

  /**
   * A connection for one step of a staging ({@link StagedScope}): its own transaction, committed by
   * the caller; closed uncommitted, the step is rolled back.
   */
  Connection stagingConnection() throws SQLException {
    Connection c = dataSource.getConnection();
    try {
      c.setAutoCommit(false);
      return c;
    } catch (SQLException e) {
      c.close();
      throw e;
    }
  }

  /**
   * PostgreSQL: starts {@code COPY run_item FROM STDIN} on {@code c}, for {@link #copyText} of the
   * step's rows. COPY streams rows into the table as they are written, without a statement per row:
   * a million rows staged in seconds instead of minutes (docs/bench.md, "Staging"). A repeated
   * account fails the whole COPY on the unique index; the caller writes the step again with {@link
   * #insertNew}.
   */
  CopyIn startCopy(Connection c) throws SQLException {
    return c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY " + COPY_COLUMNS + " FROM STDIN");
  }

  /**
   * Rows in COPY's text format. Ids are item id segments ({@code [A-Za-z0-9._:@+=-]}), so nothing
   * needs escaping.
   */
  static byte[] copyText(String scopeId, List<NewRow> rows) {
    StringBuilder text = new StringBuilder(rows.size() * (scopeId.length() + 48));
    for (NewRow row : rows) {
      text.append(scopeId)
          .append('\t')
          .append(row.seq())
          .append('\t')
          .append(row.account().accountId())
          .append('\t')
          .append(row.account().cursor())
          .append('\t')
          .append(row.position())
          .append('\t')
          .append(row.shard())
          .append('\n');
    }
    return text.toString().getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * Inserts rows on {@code c} as they are, in one batch: on H2 the step's plain INSERT, several
   * times quicker than {@link #insertNew}'s look before each row (100,000 rows of an upload took 87
   * s that way at load 22, and the upload's connection idled out before its answer). A repeat fails
   * the batch on the unique index (SQLState 23505); the caller rolls back and uses insertNew.
   */
  void insertAll(Connection c, String scopeId, List<NewRow> rows) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO " + COPY_COLUMNS + " VALUES (?, ?, ?, ?, ?, ?)")) {
      for (NewRow row : rows) {
        bindRow(ps, scopeId, row);
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  /**
   * Inserts rows on {@code c} and skips every account already staged under {@code scopeId} (earlier
   * or in these rows): the unique index on (scope, account, cursor) makes a repeat impossible, this
   * insert makes it visible instead of failing. Answers the rows skipped. H2 stages every step this
   * way; PostgreSQL only a step whose COPY met a repeat.
   */
  List<NewRow> insertNew(Connection c, String scopeId, List<NewRow> rows) throws SQLException {
    String sql =
        "INSERT INTO "
            + COPY_COLUMNS
            + " SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM run_item"
            + " WHERE scope_id = ? AND account_id = ? AND provider_cursor = ?)";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (NewRow row : rows) {
        bindRow(ps, scopeId, row);
        ps.setString(7, scopeId);
        ps.setString(8, row.account().accountId());
        ps.setString(9, row.account().cursor());
        ps.addBatch();
      }
      int[] inserted = ps.executeBatch();
      List<NewRow> repeats = new ArrayList<>();
      for (int i = 0; i < inserted.length; i++) {
        if (inserted[i] == 0) {
          repeats.add(rows.get(i));
        }
      }
      return repeats;
    }
  }

  /** Binds a staged row to the first six parameters, in {@code COPY_COLUMNS}' order. */
  private static void bindRow(PreparedStatement ps, String scopeId, NewRow row)
      throws SQLException {
    ps.setString(1, scopeId);
    ps.setInt(2, row.seq());
    ps.setString(3, row.account().accountId());
    ps.setString(4, row.account().cursor());
    ps.setLong(5, row.position());
    ps.setInt(6, row.shard());
  }

  /** The seqs of a scope's rows in [{@code from}, {@code to}). */
  Set<Integer> seqsIn(String scopeId, int from, int to) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT seq FROM run_item WHERE scope_id = ? AND seq >= ? AND seq < ?")) {
      ps.setString(1, scopeId);
      ps.setInt(2, from);
      ps.setInt(3, to);
      Set<Integer> seqs = new HashSet<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          seqs.add(rs.getInt(1));
        }
      }
      return seqs;
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the scope of a run: " + e.getMessage(), e);
    }
  }

  /**
   * Deletes a scope's rows from {@code fromSeq} on, on {@code c}: what a stager that goes on after
   * a fault finds past the last step it can trust.
   */
  int deleteFrom(Connection c, String scopeId, int fromSeq) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("DELETE FROM run_item WHERE scope_id = ? AND seq >= ?")) {
      ps.setString(1, scopeId);
      ps.setInt(2, fromSeq);
      return ps.executeUpdate();
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

  /**
   * Caches the terminal status (or QUARANTINED) of the item with this account and cursor: the lease
   * API's settlement of an item no dispatcher handed out (a claim by id), which the dispatcher that
   * pages the item's shard in later reads here (docs/design.md, "Dispatch on every node").
   */
  public void markStatus(String scopeId, String accountId, String cursor, short status) {
    String sql =
        "UPDATE run_item SET status = ? WHERE scope_id = ? AND account_id = ?"
            + " AND provider_cursor = ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setShort(1, status);
      ps.setString(2, scopeId);
      ps.setString(3, accountId);
      ps.setString(4, cursor);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("could not cache an item's status: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    dataSource.close();
  }
}

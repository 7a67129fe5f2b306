package io.fencekeeper.run;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The {@code run_staging} table (V5): one row per run whose scope a node is staging, so that every
 * node can see it and a retried create joins it instead of staging a second copy. All of its SQL
 * lives here. Times come from the database ({@code CURRENT_TIMESTAMP}), so nodes with different
 * clocks agree on how old a heartbeat is. Calls block.
 */
final class StagingTable {

  static final String STAGING = "STAGING";
  static final String FAILED = "FAILED";

  /** One row, with the database's time when it was read. */
  record Row(
      String runId,
      String scopeId,
      String requestDigest,
      String job,
      String businessDate,
      String deadline,
      int maxAttempts,
      int maxFailedItems,
      String scopeKind,
      String node,
      String state,
      long rowsStaged,
      String failure,
      Instant startedAt,
      Instant updatedAt,
      Instant readAt) {

    Duration heartbeatAge() {
      return Duration.between(updatedAt, readAt);
    }
  }

  /** What a stager writes when it claims a run. */
  record Claim(
      String runId,
      String scopeId,
      String requestDigest,
      RunRequest request,
      String scopeKind,
      String node) {}

  private static final String COLUMNS =
      "run_id, scope_id, request_digest, job, business_date, deadline, max_attempts,"
          + " max_failed_items, scope_kind, node, state, rows_staged, failure, started_at,"
          + " updated_at, CURRENT_TIMESTAMP";

  private final DataSource dataSource;

  StagingTable(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  Optional<Row> find(String runId) {
    List<Row> rows = select(" WHERE run_id = ?", runId);
    return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
  }

  List<Row> all() {
    return select(" ORDER BY run_id", null);
  }

  /** Claims a run nobody stages; false when another node's row is already there. */
  boolean insert(Claim claim) {
    String sql =
        "INSERT INTO run_staging (run_id, scope_id, request_digest, job, business_date, deadline,"
            + " max_attempts, max_failed_items, scope_kind, node, state, rows_staged)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '"
            + STAGING
            + "', 0)";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, claim);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if (e.getSQLState() != null && e.getSQLState().startsWith("23")) {
        return false; // primary key: another node claimed the run first
      }
      throw failed("claim", e);
    }
  }

  /**
   * Takes over a row whose stager died or failed: conditional on the scope id read, so of two nodes
   * taking over at once one wins, and the old stager's next heartbeat finds it lost.
   */
  boolean takeOver(String previousScopeId, Claim claim) {
    String sql =
        "UPDATE run_staging SET scope_id = ?, request_digest = ?, job = ?, business_date = ?,"
            + " deadline = ?, max_attempts = ?, max_failed_items = ?, scope_kind = ?, node = ?,"
            + " state = '"
            + STAGING
            + "', rows_staged = 0, failure = NULL, started_at = CURRENT_TIMESTAMP,"
            + " updated_at = CURRENT_TIMESTAMP WHERE run_id = ? AND scope_id = ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      RunRequest r = claim.request();
      ps.setString(1, claim.scopeId());
      ps.setString(2, claim.requestDigest());
      ps.setString(3, r.job());
      ps.setString(4, r.businessDate().toString());
      ps.setString(5, r.deadline().toString());
      ps.setInt(6, r.maxAttempts());
      ps.setInt(7, r.maxFailedItems());
      ps.setString(8, claim.scopeKind());
      ps.setString(9, claim.node());
      ps.setString(10, claim.runId());
      ps.setString(11, previousScopeId);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("take over", e);
    }
  }

  /** The stager is alive and has staged {@code rows}; false when the row is no longer its own. */
  boolean heartbeat(String runId, String scopeId, long rows) {
    String sql =
        "UPDATE run_staging SET rows_staged = ?, updated_at = CURRENT_TIMESTAMP"
            + " WHERE run_id = ? AND scope_id = ? AND state = '"
            + STAGING
            + "'";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, rows);
      ps.setString(2, runId);
      ps.setString(3, scopeId);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("heartbeat", e);
    }
  }

  /** Staging ended without a run; the reason stays visible until a create starts over. */
  void markFailed(String runId, String scopeId, String reason) {
    String sql =
        "UPDATE run_staging SET state = '"
            + FAILED
            + "', failure = ?, updated_at = CURRENT_TIMESTAMP WHERE run_id = ? AND scope_id = ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, reason.length() > 3900 ? reason.substring(0, 3900) + "..." : reason);
      ps.setString(2, runId);
      ps.setString(3, scopeId);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw failed("mark failed", e);
    }
  }

  /** The coordinator has the run (or the staging's outcome was answered): the row goes. */
  void remove(String runId, String scopeId) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("DELETE FROM run_staging WHERE run_id = ? AND scope_id = ?")) {
      ps.setString(1, runId);
      ps.setString(2, scopeId);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw failed("remove", e);
    }
  }

  private static void bind(PreparedStatement ps, Claim claim) throws SQLException {
    RunRequest r = claim.request();
    ps.setString(1, claim.runId());
    ps.setString(2, claim.scopeId());
    ps.setString(3, claim.requestDigest());
    ps.setString(4, r.job());
    ps.setString(5, r.businessDate().toString());
    ps.setString(6, r.deadline().toString());
    ps.setInt(7, r.maxAttempts());
    ps.setInt(8, r.maxFailedItems());
    ps.setString(9, claim.scopeKind());
    ps.setString(10, claim.node());
  }

  private List<Row> select(String where, String runId) {
    String sql = "SELECT " + COLUMNS + " FROM run_staging" + where;
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      if (runId != null) {
        ps.setString(1, runId);
      }
      List<Row> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(
              new Row(
                  rs.getString(1),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getString(5),
                  rs.getString(6),
                  rs.getInt(7),
                  rs.getInt(8),
                  rs.getString(9),
                  rs.getString(10),
                  rs.getString(11),
                  rs.getLong(12),
                  rs.getString(13),
                  instant(rs, 14),
                  instant(rs, 15),
                  instant(rs, 16)));
        }
      }
      return rows;
    } catch (SQLException e) {
      throw failed("read", e);
    }
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    return rs.getObject(column, OffsetDateTime.class).toInstant();
  }

  private static IllegalStateException failed(String what, SQLException e) {
    return new IllegalStateException("run_staging " + what + " failed: " + e.getMessage(), e);
  }
}

package io.fencekeeper.run;

import io.fencekeeper.run.scope.ScopeSink;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The {@code run_staging} table (V5, V11): one row per run whose scope a node is staging, so that
 * every node can see it, a retried create joins it instead of staging a second copy, and a staging
 * cut off by a fault goes on from its last committed step. All of its SQL lives here. Times come
 * from the database ({@code CURRENT_TIMESTAMP}), so nodes with different clocks agree on how old a
 * heartbeat is. Every write of a stager is conditional on its {@code holder}: once another stager
 * took the row over, the old one's steps, heartbeats and summary change nothing. Calls block.
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
      Instant readAt,
      String request,
      String holder,
      String incarnation,
      int nextSeq,
      long resumeRows,
      String resumeDigest,
      Long scopeCount,
      String scopeDigest,
      double rowsPerSecond,
      int resumes) {

    Duration heartbeatAge() {
      return Duration.between(updatedAt, readAt);
    }

    /** Where a stager that takes the row over goes on from: the last clean step. */
    ScopeSink.ReadSoFar resumePoint() {
      return resumeRows == 0
          ? ScopeSink.ReadSoFar.NOTHING
          : new ScopeSink.ReadSoFar(resumeRows, resumeDigest, true);
    }
  }

  /**
   * A stager's hold on a row: the run, the scope its rows are staged under, and its own claim.
   * {@code requestJson} is the request as another node reads it to go on.
   */
  record Claim(
      String runId,
      String scopeId,
      String holder,
      String requestDigest,
      RunRequest request,
      String requestJson,
      String scopeKind,
      String node,
      String incarnation) {}

  private static final String COLUMNS =
      "run_id, scope_id, request_digest, job, business_date, deadline, max_attempts,"
          + " max_failed_items, scope_kind, node, state, rows_staged, failure, started_at,"
          + " updated_at, CURRENT_TIMESTAMP, request, holder, incarnation, next_seq, resume_rows,"
          + " resume_digest, scope_count, scope_digest, rows_per_second, resumes";

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
            + " max_attempts, max_failed_items, scope_kind, node, state, rows_staged, request,"
            + " holder, incarnation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '"
            + STAGING
            + "', 0, ?, ?, ?)";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
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
      ps.setString(11, claim.requestJson());
      ps.setString(12, claim.holder());
      ps.setString(13, claim.incarnation());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if (e.getSQLState() != null && e.getSQLState().startsWith("23")) {
        return false; // primary key: another node claimed the run first
      }
      throw failed("claim", e);
    }
  }

  /**
   * Starts a failed staging, or one cut off that cannot go on, over with a new scope id:
   * conditional on the row as read, so of two nodes starting over at once one wins.
   */
  boolean startOver(Row previous, Claim claim) {
    String sql =
        "UPDATE run_staging SET scope_id = ?, request_digest = ?, job = ?, business_date = ?,"
            + " deadline = ?, max_attempts = ?, max_failed_items = ?, scope_kind = ?, node = ?,"
            + " state = '"
            + STAGING
            + "', rows_staged = 0, failure = NULL, started_at = CURRENT_TIMESTAMP,"
            + " updated_at = CURRENT_TIMESTAMP, request = ?, holder = ?, incarnation = ?,"
            + " next_seq = 0, resume_rows = 0, resume_digest = NULL, scope_count = NULL,"
            + " scope_digest = NULL, rows_per_second = 0, resumes = 0"
            + " WHERE run_id = ? AND scope_id = ? AND "
            + sameHolder();
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
      ps.setString(10, claim.requestJson());
      ps.setString(11, claim.holder());
      ps.setString(12, claim.incarnation());
      ps.setString(13, previous.runId());
      ps.setString(14, previous.scopeId());
      ps.setString(15, previous.holder());
      ps.setString(16, previous.holder());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("start over", e);
    }
  }

  /**
   * Takes over a staging cut off by a fault, to go on with it under the same scope id: conditional
   * on the holder and on the heartbeat as read, so a stager that was alive after all (its heartbeat
   * moved on) keeps it, and of two nodes taking over at once one wins.
   */
  boolean takeOver(Row previous, String holder, String node, String incarnation) {
    String sql =
        "UPDATE run_staging SET holder = ?, node = ?, incarnation = ?, resumes = resumes + 1,"
            + " failure = NULL, rows_per_second = 0, updated_at = CURRENT_TIMESTAMP"
            + " WHERE run_id = ? AND scope_id = ? AND state = '"
            + STAGING
            + "' AND updated_at = ? AND "
            + sameHolder();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, holder);
      ps.setString(2, node);
      ps.setString(3, incarnation);
      ps.setString(4, previous.runId());
      ps.setString(5, previous.scopeId());
      ps.setObject(6, OffsetDateTime.ofInstant(previous.updatedAt(), ZoneOffset.UTC));
      ps.setString(7, previous.holder());
      ps.setString(8, previous.holder());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("take over", e);
    }
  }

  /**
   * The stager is alive and has staged {@code rows}, at {@code rowsPerSecond} lately; false when
   * the row is no longer its own.
   */
  boolean heartbeat(Claim claim, long rows, double rowsPerSecond) {
    String sql =
        "UPDATE run_staging SET rows_staged = ?, rows_per_second = ?,"
            + " updated_at = CURRENT_TIMESTAMP WHERE run_id = ? AND holder = ? AND state = '"
            + STAGING
            + "'";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, rows);
      ps.setDouble(2, rowsPerSecond);
      ps.setString(3, claim.runId());
      ps.setString(4, claim.holder());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("heartbeat", e);
    }
  }

  /**
   * A step is written: inside the step's own transaction on {@code c}, so that its rows and what it
   * says of them commit together. {@code clean} is where a stager that takes over goes on from
   * (null: a row up to here broke a rule, and the last clean step stays the place). False when the
   * row is no longer the claim's: the caller rolls the step back.
   */
  boolean recordStep(Connection c, Claim claim, int nextSeq, long rows, ScopeSink.ReadSoFar clean)
      throws SQLException {
    String sql =
        "UPDATE run_staging SET next_seq = ?, rows_staged = ?,"
            + (clean != null ? " resume_rows = ?, resume_digest = ?," : "")
            + " failure = NULL, updated_at = CURRENT_TIMESTAMP"
            + " WHERE run_id = ? AND holder = ? AND state = '"
            + STAGING
            + "'";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int i = 1;
      ps.setInt(i++, nextSeq);
      ps.setLong(i++, rows);
      if (clean != null) {
        ps.setLong(i++, clean.accounts());
        ps.setString(i++, clean.digest());
      }
      ps.setString(i++, claim.runId());
      ps.setString(i, claim.holder());
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * The seq after the claim's last committed step; empty when the row is no longer its own. A step
   * whose commit was cut off is looked up here: committed, it must not be written again.
   */
  Optional<Integer> nextSeq(Claim claim) {
    return find(claim.runId()).filter(row -> claim.holder().equals(row.holder())).map(Row::nextSeq);
  }

  /**
   * Locks the row while {@code c}'s transaction deletes the claim's rows: a stager that took over
   * in the meantime waits, and one that took over before is seen (false: delete nothing).
   */
  boolean lockHeld(Connection c, Claim claim) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT holder FROM run_staging WHERE run_id = ? FOR UPDATE")) {
      ps.setString(1, claim.runId());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && claim.holder().equals(rs.getString(1));
      }
    }
  }

  /**
   * Every account is staged and valid: the run can now be created from the rows alone, on any node.
   * False when the row is no longer the claim's.
   */
  boolean recordSummary(Claim claim, long count, String digest) {
    String sql =
        "UPDATE run_staging SET scope_count = ?, scope_digest = ?, rows_staged = ?,"
            + " updated_at = CURRENT_TIMESTAMP WHERE run_id = ? AND holder = ? AND state = '"
            + STAGING
            + "'";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, count);
      ps.setString(2, digest);
      ps.setLong(3, count);
      ps.setString(4, claim.runId());
      ps.setString(5, claim.holder());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("record the summary", e);
    }
  }

  /** A transient fault the stager waits out, shown with the run meanwhile (null: none now). */
  void noteFault(Claim claim, String fault) {
    String sql =
        "UPDATE run_staging SET failure = ? WHERE run_id = ? AND holder = ? AND state = '"
            + STAGING
            + "'";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, bounded(fault));
      ps.setString(2, claim.runId());
      ps.setString(3, claim.holder());
      ps.executeUpdate();
    } catch (SQLException e) {
      throw failed("note a fault", e);
    }
  }

  /** Staging ended without a run; the reason stays visible until a create starts over. */
  void markFailed(Claim claim, String reason) {
    String sql =
        "UPDATE run_staging SET state = '"
            + FAILED
            + "', failure = ?, rows_per_second = 0, updated_at = CURRENT_TIMESTAMP"
            + " WHERE run_id = ? AND holder = ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, bounded(reason));
      ps.setString(2, claim.runId());
      ps.setString(3, claim.holder());
      ps.executeUpdate();
    } catch (SQLException e) {
      throw failed("mark failed", e);
    }
  }

  /** The coordinator has the run (or the staging's outcome was answered): the row goes. */
  void remove(Claim claim) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("DELETE FROM run_staging WHERE run_id = ? AND holder = ?")) {
      ps.setString(1, claim.runId());
      ps.setString(2, claim.holder());
      ps.executeUpdate();
    } catch (SQLException e) {
      throw failed("remove", e);
    }
  }

  /** A row written before holders existed has none: null matches null. */
  private static String sameHolder() {
    return "(holder = ? OR (holder IS NULL AND CAST(? AS VARCHAR(64)) IS NULL))";
  }

  private static String bounded(String text) {
    return text == null || text.length() <= 3900 ? text : text.substring(0, 3900) + "...";
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
          Long count = rs.getLong(23);
          if (rs.wasNull()) {
            count = null;
          }
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
                  instant(rs, 16),
                  rs.getString(17),
                  rs.getString(18),
                  rs.getString(19),
                  rs.getInt(20),
                  rs.getLong(21),
                  rs.getString(22),
                  count,
                  rs.getString(24),
                  rs.getDouble(25),
                  rs.getInt(26)));
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

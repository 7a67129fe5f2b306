package io.fencekeeper.run;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The runs that ended, filed in {@code run_record} (docs/design.md, "Runs and the coordinator"):
 * the coordinator keeps only the runs that have not ended, so neither its memory, its snapshots nor
 * a list of runs grows with history. A run's record and counters are kept as JSON, its state, job,
 * dates for the list's filters. Calls block: callers run them on the blocking executor.
 */
public final class EndedRuns {

  /**
   * A filed run: what the coordinator knew, its counters from the journal, and where retention
   * archived it ({@code archive}: null until the archive was complete).
   */
  public record Filed(RunRecord record, RunSignals signals, RunArchive archive) {
    public RunView view() {
      return RunView.of(record, null, signals, archive);
    }
  }

  private static final String COLUMNS =
      "record, signals, archive_file, archive_sha256, archive_bytes, archive_items,"
          + " archive_events, archive_node, archived_at, pruned_at, rows_deleted";

  private final DataSource dataSource;
  private final ObjectMapper json;

  EndedRuns(DataSource dataSource, ObjectMapper json) {
    this.dataSource = dataSource;
    this.json = json;
  }

  /** On the run tables' database and connections; {@code json} as the node writes JSON. */
  public static EndedRuns on(RunItemStore store, ObjectMapper json) {
    return new EndedRuns(store.dataSource(), json);
  }

  /** Files the run (again, if it was filed before: a resumed run that ended again). */
  public void file(RunRecord record, RunSignals signals) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement delete =
              c.prepareStatement("DELETE FROM run_record WHERE run_id = ?");
          PreparedStatement insert =
              c.prepareStatement(
                  "INSERT INTO run_record (run_id, job, business_date, state, created_at, ended_at,"
                      + " record, signals) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
        delete.setString(1, record.runId());
        delete.executeUpdate();
        insert.setString(1, record.runId());
        insert.setString(2, record.request().job());
        insert.setString(3, record.request().businessDate().toString());
        insert.setString(4, record.state().name());
        insert.setTimestamp(5, inMicros(record.createdAt()));
        insert.setTimestamp(6, record.endedAt() == null ? null : inMicros(record.endedAt()));
        insert.setString(7, json.writeValueAsString(record));
        insert.setString(8, json.writeValueAsString(signals));
        insert.executeUpdate();
        c.commit();
      } catch (SQLException | JsonProcessingException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException | JsonProcessingException e) {
      throw new IllegalStateException(
          "could not file run " + record.runId() + ": " + e.getMessage(), e);
    }
  }

  public Optional<Filed> find(String runId) {
    List<Filed> found =
        query("SELECT " + COLUMNS + " FROM run_record WHERE run_id = ?", List.of(runId));
    return found.stream().findFirst();
  }

  /**
   * One page of the filed runs that match {@code filter}, newest first; up to {@code limit} rows
   * (the caller asks for more than a page when it merges other runs in).
   */
  public List<Filed> page(RunFilter filter, int limit) {
    StringBuilder sql = new StringBuilder("SELECT " + COLUMNS + " FROM run_record WHERE 1 = 1");
    List<Object> params = new ArrayList<>();
    if (!filter.states().isEmpty()) {
      sql.append(" AND state IN (")
          .append(filter.states().stream().map(s -> "?").collect(Collectors.joining(", ")))
          .append(")");
      filter.states().stream().map(Enum::name).sorted().forEach(params::add);
    }
    if (filter.job() != null) {
      sql.append(" AND job = ?");
      params.add(filter.job());
    }
    if (filter.from() != null) {
      sql.append(" AND business_date >= ?");
      params.add(filter.from().toString());
    }
    if (filter.to() != null) {
      sql.append(" AND business_date <= ?");
      params.add(filter.to().toString());
    }
    if (filter.after() != null) {
      sql.append(" AND (created_at < ? OR (created_at = ? AND run_id > ?))");
      Timestamp at = inMicros(filter.after().createdAt());
      params.add(at);
      params.add(at);
      params.add(filter.after().runId());
    }
    sql.append(" ORDER BY created_at DESC, run_id ASC LIMIT ?");
    params.add(limit);
    return query(sql.toString(), params);
  }

  /**
   * A time as {@code created_at} and {@code ended_at} hold it: in microseconds, cut here rather
   * than by the database. A node's clock gives nanoseconds and the columns keep microseconds: on H2
   * a run whose stored time came out below its own cursor (the same instant, in nanoseconds) was
   * listed again on every next page (EndedRunsTest); retention pages by {@code ended_at} the same
   * way.
   */
  private static Timestamp inMicros(Instant at) {
    return Timestamp.from(at.truncatedTo(ChronoUnit.MICROS));
  }

  /** Counters that grew after the run was filed (a late holder refused, say). */
  public void addSignals(String runId, RunSignals delta) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement read =
              c.prepareStatement("SELECT signals FROM run_record WHERE run_id = ? FOR UPDATE");
          PreparedStatement write =
              c.prepareStatement("UPDATE run_record SET signals = ? WHERE run_id = ?")) {
        read.setString(1, runId);
        try (ResultSet rs = read.executeQuery()) {
          if (rs.next()) {
            RunSignals now = json.readValue(rs.getString(1), RunSignals.class).plus(delta);
            write.setString(1, json.writeValueAsString(now));
            write.setString(2, runId);
            write.executeUpdate();
          }
        }
        c.commit();
      } catch (SQLException | JsonProcessingException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException | JsonProcessingException e) {
      throw new IllegalStateException("could not count on run " + runId + ": " + e.getMessage(), e);
    }
  }

  /** The archive columns of a row of {@link #COLUMNS}: null until the archive was complete. */
  private static RunArchive archive(ResultSet rs) throws SQLException {
    Timestamp archivedAt = rs.getTimestamp(9);
    if (archivedAt == null) {
      return null;
    }
    Timestamp prunedAt = rs.getTimestamp(10);
    return new RunArchive(
        rs.getString(3),
        rs.getString(4),
        rs.getLong(5),
        rs.getLong(6),
        rs.getLong(7),
        rs.getString(8),
        archivedAt.toInstant(),
        prunedAt == null ? null : prunedAt.toInstant(),
        rs.getLong(11));
  }

  // --- retention (docs/design.md, "Retention and the archive") ---------------------------------

  /**
   * Up to {@code limit} filed runs that ended before {@code cutoff} and are not pruned yet, oldest
   * end first, after {@code after} (the last one of the previous page; null: from the start). A run
   * filed here may be held by the coordinator again (resumed): only its claim tells.
   */
  public List<Filed> endedBefore(Instant cutoff, Filed after, int limit) {
    StringBuilder sql =
        new StringBuilder(
            "SELECT " + COLUMNS + " FROM run_record WHERE ended_at < ? AND pruned_at IS NULL");
    List<Object> params = new ArrayList<>();
    // ends are filed to the microsecond: the cutoff is cut the same way, so a run whose end and
    // the cutoff share a microsecond is kept (bound with its nanoseconds, the database would round
    // the cutoff up and prune a run that ended after it)
    params.add(inMicros(cutoff));
    if (after != null) {
      Timestamp at = inMicros(after.record().endedAt());
      sql.append(" AND (ended_at > ? OR (ended_at = ? AND run_id > ?))");
      params.add(at);
      params.add(at);
      params.add(after.record().runId());
    }
    sql.append(" ORDER BY ended_at, run_id LIMIT ?");
    params.add(limit);
    return query(sql.toString(), params);
  }

  /**
   * Makes {@code writer} the one retention pass that may mark the run archived (the last to ask
   * wins); false once the run is archived.
   */
  public boolean claimArchiveWriter(String runId, String writer) {
    return update(
            "UPDATE run_record SET archive_writer = ? WHERE run_id = ? AND archived_at IS NULL",
            List.of(writer, runId))
        == 1;
  }

  /** Whether {@code writer} is still the pass that may mark the run archived. */
  public boolean isArchiveWriter(String runId, String writer) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT 1 FROM run_record WHERE run_id = ? AND archive_writer = ?"
                    + " AND archived_at IS NULL")) {
      ps.setString(1, runId);
      ps.setString(2, writer);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read run " + runId + ": " + e.getMessage(), e);
    }
  }

  /**
   * Records that the run's archive is complete on disk, if {@code writer} still holds the claim and
   * nobody marked it before; from then on its rows may be deleted. False: another pass won.
   */
  public boolean markArchived(String runId, String writer, RunArchive archive) {
    return update(
            "UPDATE run_record SET archive_file = ?, archive_sha256 = ?, archive_bytes = ?,"
                + " archive_items = ?, archive_events = ?, archive_node = ?, archived_at = ?"
                + " WHERE run_id = ? AND archive_writer = ? AND archived_at IS NULL",
            List.of(
                archive.file(),
                archive.sha256(),
                archive.bytes(),
                archive.items(),
                archive.events(),
                archive.node(),
                Timestamp.from(archive.archivedAt()),
                runId,
                writer))
        == 1;
  }

  /** Every row of the run is deleted: its record is now the run's tombstone. */
  public void markPruned(String runId, Instant at) {
    update(
        "UPDATE run_record SET pruned_at = ? WHERE run_id = ? AND archived_at IS NOT NULL"
            + " AND pruned_at IS NULL",
        List.of(Timestamp.from(at), runId));
  }

  private int update(String sql, List<?> params) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.size(); i++) {
        ps.setObject(i + 1, params.get(i));
      }
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("could not update ended runs: " + e.getMessage(), e);
    }
  }

  private List<Filed> query(String sql, List<?> params) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.size(); i++) {
        ps.setObject(i + 1, params.get(i));
      }
      List<Filed> found = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          found.add(
              new Filed(
                  json.readValue(rs.getString(1), RunRecord.class),
                  json.readValue(rs.getString(2), RunSignals.class),
                  archive(rs)));
        }
      }
      return found;
    } catch (SQLException | JsonProcessingException e) {
      throw new IllegalStateException("could not read ended runs: " + e.getMessage(), e);
    }
  }
}

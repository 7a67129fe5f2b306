package io.fencekeeper.run;

import io.fencekeeper.item.WorkItem;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.sql.DataSource;

/**
 * Deletes what an archived run leaves in the database (docs/design.md, "Retention and the
 * archive"): its items' events, tags and snapshots and its {@code run_item} rows, in batches, each
 * batch one transaction that also counts its rows on the run's record. A batch takes the first
 * items of the run's scope still staged, so a pass that died half-way goes on from the first item
 * not deleted yet: the staged rows are the list of what is left.
 *
 * <p>Plain SQL on the tables the migrations create, not pekko-persistence-jdbc's {@code
 * deleteMessages}: its journal DAO keeps each entity's highest event (marked deleted) so that the
 * entity's sequence numbers never restart, which would leave one row per item of every night for
 * ever; and it deletes one entity per transaction, through the entity. An item of an archived run
 * is never written again (its run id stays taken, the API refuses its items), so nothing needs that
 * row.
 */
public final class ScopePurge {

  /** What one batch deleted; {@code items}: 0 once nothing of the run is left. */
  public record Batch(int items, long eventRows, long tagRows, long snapshotRows) {
    public long rows() {
      return items + eventRows + tagRows + snapshotRows;
    }
  }

  private final DataSource dataSource;
  private final boolean postgres;

  private ScopePurge(DataSource dataSource, boolean postgres) {
    this.dataSource = dataSource;
    this.postgres = postgres;
  }

  /** On the run tables' database and connections. */
  public static ScopePurge on(RunItemStore store) {
    return new ScopePurge(store.dataSource(), store.isPostgres());
  }

  /**
   * Deletes the first {@code limit} items still staged for {@code run}: their events (and tag
   * rows), their snapshots and their {@code run_item} rows, and adds the rows to {@code
   * run_record.rows_deleted}, all in one transaction.
   */
  public Batch deleteBatch(RunRecord run, int limit) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        List<String> ids = new ArrayList<>();
        int lastSeq = -1;
        try (PreparedStatement rows =
            c.prepareStatement(
                "SELECT seq, account_id, provider_cursor FROM run_item WHERE scope_id = ?"
                    + " ORDER BY seq LIMIT ?")) {
          rows.setString(1, run.scopeId());
          rows.setInt(2, limit);
          try (ResultSet rs = rows.executeQuery()) {
            while (rs.next()) {
              lastSeq = rs.getInt(1);
              ids.add(WorkItem.persistenceId(run.itemId(rs.getString(2), rs.getString(3))).id());
            }
          }
        }
        if (ids.isEmpty()) {
          c.commit();
          return new Batch(0, 0, 0, 0);
        }
        String in = "(" + String.join(", ", Collections.nCopies(ids.size(), "?")) + ")";
        // the journal's names are quoted: H2's schema has them in lower case (as PostgreSQL folds
        // them); tags first, counted: the foreign key would cascade them uncounted
        long tags =
            delete(
                c,
                "DELETE FROM \"event_tag\" WHERE \"event_id\" IN (SELECT \"ordering\""
                    + " FROM \"event_journal\" WHERE \"persistence_id\" IN "
                    + in
                    + ")",
                ids);
        long events =
            delete(c, "DELETE FROM \"event_journal\" WHERE \"persistence_id\" IN " + in, ids);
        long snapshots =
            delete(c, "DELETE FROM \"snapshot\" WHERE \"persistence_id\" IN " + in, ids);
        int items;
        try (PreparedStatement ps =
            c.prepareStatement("DELETE FROM run_item WHERE scope_id = ? AND seq <= ?")) {
          ps.setString(1, run.scopeId());
          ps.setInt(2, lastSeq);
          items = ps.executeUpdate();
        }
        Batch batch = new Batch(items, events, tags, snapshots);
        try (PreparedStatement ps =
            c.prepareStatement(
                "UPDATE run_record SET rows_deleted = rows_deleted + ? WHERE run_id = ?")) {
          ps.setLong(1, batch.rows());
          ps.setString(2, run.runId());
          ps.executeUpdate();
        }
        c.commit();
        return batch;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not delete items of run " + run.runId() + ": " + e.getMessage(), e);
    }
  }

  private static long delete(Connection c, String sql, List<String> ids) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < ids.size(); i++) {
        ps.setString(i + 1, ids.get(i));
      }
      return ps.executeUpdate();
    }
  }

  /**
   * A staging row the run's own scope may have left; never another staging of the same run id (a
   * create of the archived run being staged now, to be answered with the archived run).
   */
  public int deleteStaging(RunRecord run) {
    String runId = run.runId();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("DELETE FROM run_staging WHERE run_id = ? AND scope_id = ?")) {
      ps.setString(1, runId);
      ps.setString(2, run.scopeId());
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not delete the staging of run " + runId + ": " + e.getMessage(), e);
    }
  }

  /**
   * On PostgreSQL, a plain {@code VACUUM} (never {@code FULL}: it takes no lock that stops reads or
   * writes) of the tables the pass deleted from, so that the next nights' rows reuse the space now
   * rather than when autovacuum's thresholds (a fifth of a table by default) are reached: the
   * tables stay the size of the nights they keep. Nothing on H2 (false).
   */
  public boolean vacuum() {
    if (!postgres) {
      return false;
    }
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(true); // VACUUM cannot run inside a transaction
      s.execute("VACUUM (ANALYZE) event_journal, event_tag, snapshot, run_item");
      return true;
    } catch (SQLException e) {
      throw new IllegalStateException("VACUUM failed: " + e.getMessage(), e);
    }
  }
}

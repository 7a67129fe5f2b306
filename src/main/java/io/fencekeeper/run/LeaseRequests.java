package io.fencekeeper.run;

import io.fencekeeper.item.ItemId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The {@code lease_request} table (V10): which item a claim-next request id was granted, so that
 * the same request repeated after a lost answer finds that item again on any node, and the item
 * answers it with the same lease (docs/external-workers.md, "A claim that can be retried"). The row
 * is written before the item is asked: a node that dies between the grant and its answer leaves it
 * behind for the retry. All of its SQL lives here; calls block.
 */
final class LeaseRequests {

  private final DataSource dataSource;

  LeaseRequests(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** The item this request of this worker was pointed at, if it was. */
  Optional<ItemId> find(String runId, String workerId, String requestId) {
    String sql =
        "SELECT item_id FROM lease_request WHERE run_id = ? AND worker_id = ? AND request_id = ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, runId);
      ps.setString(2, workerId);
      ps.setString(3, requestId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(ItemId.parse(rs.getString(1))) : Optional.empty();
      }
    } catch (SQLException e) {
      throw failed("read", e);
    }
  }

  /**
   * Points the request at {@code item}; false when it already points somewhere (the same request
   * reached another node first: that one's item is the request's).
   */
  boolean point(String runId, String workerId, String requestId, ItemId item, Instant at) {
    String sql =
        "INSERT INTO lease_request (run_id, worker_id, request_id, item_id, requested_at)"
            + " VALUES (?, ?, ?, ?, ?)";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, runId);
      ps.setString(2, workerId);
      ps.setString(3, requestId);
      ps.setString(4, item.value());
      ps.setTimestamp(5, Timestamp.from(at));
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if (e.getSQLState() != null && e.getSQLState().startsWith("23")) {
        return false; // the primary key: pointed already
      }
      throw failed("write", e);
    }
  }

  /**
   * Points the request, which pointed at {@code from} (an item that could not be claimed for it),
   * at {@code to}; false when it no longer pointed at {@code from} (another copy of the request
   * moved it first).
   */
  boolean move(
      String runId, String workerId, String requestId, ItemId from, ItemId to, Instant at) {
    String sql =
        "UPDATE lease_request SET item_id = ?, requested_at = ?"
            + " WHERE run_id = ? AND worker_id = ? AND request_id = ? AND item_id = ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, to.value());
      ps.setTimestamp(2, Timestamp.from(at));
      ps.setString(3, runId);
      ps.setString(4, workerId);
      ps.setString(5, requestId);
      ps.setString(6, from.value());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("move", e);
    }
  }

  /** Deletes the requests made before {@code cutoff}: the leases they named have lapsed. */
  int forgetBefore(Instant cutoff) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("DELETE FROM lease_request WHERE requested_at < ?")) {
      ps.setTimestamp(1, Timestamp.from(cutoff));
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw failed("clean", e);
    }
  }

  private static IllegalStateException failed(String what, SQLException e) {
    // the SQL state, never the message: it may quote the ids
    return new IllegalStateException(
        "lease_request " + what + " failed (SQL state " + e.getSQLState() + ")");
  }
}

package io.fencekeeper.bench.soak;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/** One item's journal rows as the database holds them, for a finding's report. */
final class ItemJournal {

  private static final ObjectMapper CBOR = new ObjectMapper(new CBORFactory());
  private static final ObjectMapper JSON = new ObjectMapper();

  private ItemJournal() {}

  /** Each row: sequence number, the writer (one incarnation), when it was written, the event. */
  static void print(String dbUrl, String user, String password, String itemId, PrintStream out)
      throws SQLException, java.io.IOException {
    try (Connection c = DriverManager.getConnection(dbUrl, user, password);
        PreparedStatement s =
            c.prepareStatement(
                "SELECT sequence_number, writer, write_timestamp, event_ser_manifest,"
                    + " event_payload FROM event_journal WHERE persistence_id = ?"
                    + " ORDER BY sequence_number")) {
      s.setString(1, "WorkItem|" + itemId);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.printf(
              "  %3d %s %s %s %s%n",
              rs.getLong(1),
              Instant.ofEpochMilli(rs.getLong(3)),
              rs.getString(2),
              ItemHistory.eventName(rs.getString(4)),
              JSON.writeValueAsString(CBOR.readTree(rs.getBytes(5))));
        }
      }
    }
  }
}

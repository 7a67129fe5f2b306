package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.apache.pekko.persistence.jdbc.db.SlickExtension;
import org.apache.pekko.persistence.jdbc.db.SlickExtensionImpl;
import org.junit.jupiter.api.Test;

/** The journal contract on a real PostgreSQL server. */
class WorkItemOnPostgresTest extends WorkItemJournalContract {
  @Override
  TestDatabases.Target database(Path dataDir) {
    return TestDatabases.freshPostgres();
  }

  /**
   * A node stopped between its journal INSERT and its COMMIT (SIGSTOP, a frozen VM) holds the row
   * locks of that transaction. Here the stopped node is one of the journal pool's own connections,
   * taken by the test and left idle inside a transaction that writes an item's next event: the
   * server must end that session within the node's limit, and the item's own write then goes
   * through. Without the limit the session stays and every later write to the item waits on it.
   */
  @Test
  void aTransactionLeftOpenByAStoppedWriterIsEndedAndTheItemWritesAgain() throws Exception {
    ItemId item = item("acct-stopped-writer");
    Connection stopped =
        ((SlickExtensionImpl) SlickExtension.get(node.system().classicSystem()))
            .database(node.system().settings().config().getConfig("jdbc-journal"))
            .database()
            .source()
            .createConnection();
    int pid;
    try (Statement s = stopped.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      pid = rs.getInt(1);
    }
    stopped.setAutoCommit(false);
    try (PreparedStatement insert =
        stopped.prepareStatement(
            "INSERT INTO event_journal (persistence_id, sequence_number, writer, write_timestamp,"
                + " event_ser_id, event_ser_manifest, event_payload) VALUES (?, 1, 'stopped', 0,"
                + " 0, '', ''::bytea)")) {
      insert.setString(1, WorkItem.persistenceId(item).id());
      insert.executeUpdate();
    }
    // the writer stops here: no COMMIT, no ROLLBACK, the connection stays open

    try (Connection observer =
        DriverManager.getConnection(database.url(), database.user(), database.password())) {
      Await.until(
          Duration.ofSeconds(60),
          "the server to end the session left idle in a transaction (limit "
              + JournalDatabase.IDLE_TRANSACTION_LIMIT
              + ")",
          () -> !sessionAlive(observer, pid),
          () -> "session " + pid + " still " + sessionState(observer, pid));
    }
    try {
      stopped.close();
    } catch (SQLException ended) {
      // the server closed it: what this test waits for
    }

    Claimed claimed =
        assertInstanceOf(Claimed.class, ask(item, r -> new WorkItem.Claim("A", LEASE, 5, 0, r)));
    assertEquals(1, claimed.token(), "the stopped writer's event never landed");
  }

  private static boolean sessionAlive(Connection observer, int pid) {
    return !sessionState(observer, pid).equals("gone");
  }

  private static String sessionState(Connection observer, int pid) {
    try (PreparedStatement q =
        observer.prepareStatement("SELECT state FROM pg_stat_activity WHERE pid = ?")) {
      q.setInt(1, pid);
      try (ResultSet rs = q.executeQuery()) {
        return rs.next() ? String.valueOf(rs.getString(1)) : "gone";
      }
    } catch (SQLException e) {
      throw new IllegalStateException("pg_stat_activity could not be read", e);
    }
  }
}

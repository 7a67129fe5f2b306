package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.DatabaseLink;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Staging on a real PostgreSQL, where steps go in by COPY, and through its outages. */
class RunStagingOnPostgresTest extends RunStagingContract {

  TestDatabases.Target target;

  @Override
  TestDatabases.Target database(Path dataDir) {
    target = TestDatabases.freshPostgres();
    return target;
  }

  /**
   * Issue 50: a database outage of a few seconds while a run staged from a file failed its batch
   * ("terminating connection due to administrator command") and left the run STAGING for good,
   * until an operator created it again. Here a step of the file waits for a lock the test holds on
   * run_item, so that both faults meet a step being written: the server ends the stager's sessions
   * (SQLState 57P01, the error), then the database is cut off while the step is written
   * again (every connection reset, new ones refused) until the stager has knocked a few times. The
   * staging waits each out and goes on from the rows it has: the run is created with every account
   * once, and nobody had to create it again.
   */
  @Test
  void aDatabaseOutageWhileAFileIsStagedIsWaitedOutAndNoAccountIsStagedTwice() throws Exception {
    List<AccountCursor> accounts = accounts(20_000);
    Path dir = Files.createDirectories(dataDir.resolve("scopes-outage"));
    Files.writeString(dir.resolve("accounts.csv"), "accountId,cursor\n" + lines(accounts));
    RunRequest request =
        new RunRequest("outage", DATE, new Scope.Csv("accounts.csv"), DEADLINE, 3, 5);
    String runId = request.runId();
    try (DatabaseLink link = new DatabaseLink(target.url());
        RunItemStore linked =
            new RunItemStore(
                JournalDatabase.of(
                    Path.of("."), link.url(target.url()), target.user(), target.password(), 2));
        Connection locker = direct()) {
      RunStaging node = node("node-1", dir, coordinator, staging, timers, linked, 500, 2_000);
      locker.setAutoCommit(false);
      try (Statement s = locker.createStatement()) {
        s.execute("LOCK TABLE run_item IN SHARE MODE");
      }
      CompletableFuture<CreateOutcome> created =
          node.create(request, null, Duration.ofDays(1)).toCompletableFuture();
      Await.until(WITHIN, "the first step waiting for the lock", () -> stepsWaiting() > 0);

      terminateWaitingSessions(); // "terminating connection due to administrator command"
      Await.until(WITHIN, "the step written again, waiting", () -> stepsWaiting() > 0);
      link.cut();
      Await.until(
          WITHIN, "the stager to knock while the database is away", () -> link.refused() >= 2);
      assertEquals(0, stagingRow(runId).nextSeq(), "nothing committed meanwhile");
      link.mend();
      Await.until(WITHIN, "the step written once more, waiting", () -> stepsWaiting() > 0);
      locker.commit();

      RunCoordinator.CreateReply reply = replyOf(created.get(60, TimeUnit.SECONDS));

      assertInstanceOf(RunCoordinator.Created.class, reply);
      assertEquals(1, coordinator.creates.size());
      assertEquals(20_000, coordinator.creates.get(0).summary().count());
      assertEquals(digestOf(accounts), coordinator.creates.get(0).summary().digest());
      assertEquals(20_000, rowsInRunItem());
      assertEquals(0, accountsStagedTwice());
      assertTrue(table.find(runId).isEmpty(), "the staging row cleared");
    }
  }

  private Connection direct() throws SQLException {
    return DriverManager.getConnection(target.url(), target.user(), target.password());
  }

  /** Sessions whose step's COPY waits for the lock. */
  private long stepsWaiting() {
    return sessions("wait_event_type = 'Lock' AND query LIKE 'COPY run_item%'", "COUNT(*)");
  }

  private void terminateWaitingSessions() {
    sessions(
        "wait_event_type = 'Lock' AND query LIKE 'COPY run_item%'",
        "COUNT(pg_terminate_backend(pid))");
  }

  private long sessions(String where, String what) {
    try (Connection c = direct();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT "
                    + what
                    + " FROM pg_stat_activity WHERE datname = current_database()"
                    + " AND pid <> pg_backend_pid() AND "
                    + where)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("pg_stat_activity", e);
    }
  }
}

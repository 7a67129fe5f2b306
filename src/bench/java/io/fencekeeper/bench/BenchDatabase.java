package io.fencekeeper.bench;

import io.fencekeeper.journal.JournalDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * One database both contenders run on: PostgreSQL (embedded, or the one at {@code --db-url}) or an
 * H2 file. Fencekeeper's migrations create the journal; db-scheduler's table is created here, from
 * its documented PostgreSQL schema.
 */
record BenchDatabase(String name, String url, String user, String password, boolean postgres)
    implements AutoCloseable {

  private static EmbeddedPostgres embedded;

  /** Starts PostgreSQL from the binaries on the class path; one server per JVM. */
  static synchronized BenchDatabase embeddedPostgres() {
    if (embedded == null) {
      try {
        embedded = EmbeddedPostgres.builder().start();
      } catch (IOException e) {
        throw new UncheckedIOException("embedded PostgreSQL did not start", e);
      }
    }
    String database = "fk_bench_" + System.currentTimeMillis();
    try (Connection c = embedded.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + database);
    } catch (SQLException e) {
      throw new IllegalStateException("could not create database " + database, e);
    }
    return new BenchDatabase(
        "postgresql (embedded)", embedded.getJdbcUrl("postgres", database), "postgres", "", true);
  }

  static BenchDatabase external(String url, String user, String password) {
    return new BenchDatabase(
        "postgresql (" + url + ")", url, user, password, url.startsWith("jdbc:postgresql:"));
  }

  static BenchDatabase h2(Path dataDir) {
    return new BenchDatabase("h2 (file)", JournalDatabase.embeddedH2Url(dataDir), "sa", "", false);
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url, user, password);
  }

  /** Journal rows written by the entities whose persistence id contains {@code fragment}. */
  long journalEvents(String fragment) {
    try (Connection c = connect();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT count(*) FROM \"event_journal\" WHERE \"persistence_id\" LIKE ?")) {
      s.setString(1, "%" + fragment + "%");
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("counting journal events failed", e);
    }
  }

  /** db-scheduler's table as its README gives it for PostgreSQL (H2 takes the same DDL). */
  void createSchedulerTable() {
    String timestamp = postgres ? "timestamp with time zone" : "timestamp with time zone";
    String binary = postgres ? "bytea" : "blob";
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS scheduled_tasks ("
              + " task_name text NOT NULL,"
              + " task_instance text NOT NULL,"
              + " task_data "
              + binary
              + ","
              + " execution_time "
              + timestamp
              + " NOT NULL,"
              + " picked BOOLEAN NOT NULL,"
              + " picked_by text,"
              + " last_success "
              + timestamp
              + ","
              + " last_failure "
              + timestamp
              + ","
              + " consecutive_failures INT,"
              + " last_heartbeat "
              + timestamp
              + ","
              + " version BIGINT NOT NULL,"
              + " priority SMALLINT,"
              + " PRIMARY KEY (task_name, task_instance))");
      s.execute(
          "CREATE INDEX IF NOT EXISTS execution_time_idx ON scheduled_tasks (execution_time)");
      s.execute(
          "CREATE INDEX IF NOT EXISTS last_heartbeat_idx ON scheduled_tasks (last_heartbeat)");
      s.execute(
          "CREATE INDEX IF NOT EXISTS priority_execution_time_idx"
              + " ON scheduled_tasks (priority desc, execution_time asc)");
      s.execute("DELETE FROM scheduled_tasks");
    } catch (SQLException e) {
      throw new IllegalStateException("creating db-scheduler's table failed", e);
    }
  }

  @Override
  public void close() {
    // the embedded server lives as long as the JVM; see stopEmbedded
  }

  static synchronized void stopEmbedded() {
    if (embedded != null) {
      try {
        embedded.close();
      } catch (IOException ignored) {
        // its directory is temporary; the JVM is about to exit
      }
      embedded = null;
    }
  }
}

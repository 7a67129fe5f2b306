package io.fencekeeper.bench;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.localdb.PostgresBinaries;
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
 *
 * @param server the processes whose CPU is the database's (PostgreSQL on this machine), or why
 *     there are none
 * @param settings what the server says about durability, as it runs (PostgreSQL only)
 */
record BenchDatabase(
    String name,
    String url,
    String user,
    String password,
    boolean postgres,
    ProcessCpu server,
    Settings settings)
    implements AutoCloseable {

  /** The server's own word on whether a commit survives a crash. */
  record Settings(
      String serverVersion, String fsync, String synchronousCommit, String fullPageWrites) {

    /** Every commit is on disk before it is acknowledged, and a torn page can be repaired. */
    @JsonProperty("durable")
    boolean durable() {
      return fsync.equals("on") && !synchronousCommit.equals("off") && fullPageWrites.equals("on");
    }

    @Override
    public String toString() {
      return "PostgreSQL "
          + serverVersion
          + ", fsync="
          + fsync
          + " synchronous_commit="
          + synchronousCommit
          + " full_page_writes="
          + fullPageWrites
          + (durable() ? " (durable)" : " (NOT durable: a crash may lose acknowledged commits)");
    }
  }

  private static EmbeddedPostgres embedded;

  /**
   * Starts PostgreSQL from the binaries on the class path; one server per JVM. Durable unless asked
   * otherwise: zonky's builder turns {@code synchronous_commit} off and starts the server with
   * {@code -F} (no fsync), test settings that made every commit cheaper than on a real database.
   * The {@code -c} options come after {@code -F}, so they win.
   */
  static synchronized BenchDatabase embeddedPostgres(boolean durable) {
    if (embedded == null) {
      String on = durable ? "on" : "off";
      try {
        embedded =
            PostgresBinaries.builder()
                .setServerConfig("fsync", on)
                .setServerConfig("synchronous_commit", on)
                .setServerConfig("full_page_writes", on)
                .start();
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
    return postgres(
        "postgresql (embedded)", embedded.getJdbcUrl("postgres", database), "postgres", "");
  }

  static BenchDatabase external(String url, String user, String password) {
    if (!url.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException("--db-url: a jdbc:postgresql: URL, got " + url);
    }
    return postgres("postgresql (" + url + ")", url, user, password);
  }

  static BenchDatabase h2(Path dataDir) {
    return new BenchDatabase(
        "h2 (file)",
        JournalDatabase.embeddedH2Url(dataDir),
        "sa",
        "",
        false,
        ProcessCpu.notMeasured("in this JVM (H2): part of the JVM's CPU"),
        null);
  }

  /** Asks the server for its durability settings and finds its processes on this machine. */
  private static BenchDatabase postgres(String name, String url, String user, String password) {
    try (Connection c = DriverManager.getConnection(url, user, password);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT current_setting('server_version'), current_setting('fsync'),"
                    + " current_setting('synchronous_commit'),"
                    + " current_setting('full_page_writes')")) {
      rs.next();
      Settings settings =
          new Settings(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4));
      return new BenchDatabase(
          name, url, user, password, true, PostmasterLocator.locate(c, url), settings);
    } catch (SQLException e) {
      throw new IllegalStateException("could not reach " + url, e);
    }
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

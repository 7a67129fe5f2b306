package io.fencekeeper.testing;

import io.fencekeeper.journal.JournalDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real databases tests run on: an H2 file, and a real PostgreSQL server started once per test
 * JVM from Maven-resolved binaries. Every caller gets a database of its own, empty, so each test
 * class proves that the application's migrations create the schema from nothing.
 */
public final class TestDatabases {

  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static EmbeddedPostgres postgres;

  private TestDatabases() {}

  public record Target(String name, String url, String user, String password) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** The journal database of {@code target}, its schema created by the application's migrations. */
  public static JournalDatabase migrated(Target target) {
    JournalDatabase db =
        JournalDatabase.of(Path.of("."), target.url(), target.user(), target.password(), 2);
    db.migrate();
    return db;
  }

  public static Target h2File(Path directory) {
    return new Target(
        "h2",
        "jdbc:h2:file:"
            + directory.toAbsolutePath().resolve("journal-" + COUNTER.incrementAndGet())
            + ";DB_CLOSE_ON_EXIT=FALSE",
        "sa",
        "");
  }

  /** A fresh, empty PostgreSQL database on the shared embedded server. */
  public static synchronized Target freshPostgres() {
    EmbeddedPostgres server = postgresServer();
    String database = "fk_test_" + COUNTER.incrementAndGet();
    try (Connection c = server.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + database);
    } catch (SQLException e) {
      throw new IllegalStateException("could not create database " + database, e);
    }
    return new Target("postgresql", server.getJdbcUrl("postgres", database), "postgres", "");
  }

  public static synchronized EmbeddedPostgres postgresServer() {
    if (postgres == null) {
      try {
        postgres = EmbeddedPostgres.builder().start();
      } catch (IOException e) {
        throw new UncheckedIOException("embedded PostgreSQL did not start", e);
      }
      EmbeddedPostgres started = postgres;
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      started.close();
                    } catch (IOException ignored) {
                      // the JVM is going away; the server's directory is temporary
                    }
                  }));
    }
    return postgres;
  }
}

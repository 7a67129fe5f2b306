package io.fencekeeper.journal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Where the journal lives: the embedded H2 file by default, PostgreSQL when a jdbc:postgresql URL
 * is configured. Owns the schema: versioned Flyway migrations run at start-up, before the journal
 * plugin opens its pool, so a node never writes to a half-made schema.
 */
public record JournalDatabase(
    Kind kind, String url, String user, String password, int maxConnections) {

  public enum Kind {
    H2("org.h2.Driver", "slick.jdbc.H2Profile$", "h2"),
    POSTGRESQL("org.postgresql.Driver", "slick.jdbc.PostgresProfile$", "postgresql");

    final String driver;
    final String slickProfile;
    final String migrationFolder;

    Kind(String driver, String slickProfile, String migrationFolder) {
      this.driver = driver;
      this.slickProfile = slickProfile;
      this.migrationFolder = migrationFolder;
    }
  }

  /**
   * The database a node's settings describe: {@code url} selects it, an empty url the embedded H2
   * file under {@code dataDir}.
   */
  public static JournalDatabase of(
      Path dataDir, String url, String user, String password, int maxConnections) {
    if (url.isEmpty()) {
      url = embeddedH2Url(dataDir);
    }
    Kind kind;
    if (url.startsWith("jdbc:postgresql:")) {
      kind = Kind.POSTGRESQL;
    } else if (url.startsWith("jdbc:h2:")) {
      kind = Kind.H2;
    } else {
      throw new IllegalArgumentException(
          "FENCEKEEPER_DB_URL must start with jdbc:postgresql: or jdbc:h2:, got '" + url + "'");
    }
    return new JournalDatabase(kind, url, user, password, maxConnections);
  }

  /**
   * The embedded default. DB_CLOSE_ON_EXIT=FALSE: the journal closes the database after the
   * coordinated shutdown has flushed its last write, not H2's own shutdown hook before that.
   */
  public static String embeddedH2Url(Path dataDir) {
    return "jdbc:h2:file:"
        + dataDir.toAbsolutePath().resolve("fencekeeper")
        + ";DB_CLOSE_ON_EXIT=FALSE;LOCK_TIMEOUT=10000";
  }

  /**
   * How long PostgreSQL lets a session of this node sit idle inside an open transaction before it
   * ends the session. A healthy node keeps a transaction open for milliseconds (one multi-row
   * INSERT, then COMMIT). A node stopped between the two (SIGSTOP, a frozen VM, a long pause) keeps
   * its transaction's row locks for as long as it is stopped: the survivors, writing the next event
   * of an item the stopped node was writing to, wait on the journal's primary key, and with one
   * journal writer per node every write of that node waits behind that one. Before this limit a
   * node paused past its removal stalled a survivor's journal until the journal's circuit breaker
   * opened (a {@code PausedNodeProcessTest} failure in CI). Shorter than the split-brain resolver's
   * stable-after (7 s) and the lease, so the locks are gone before anyone takes the stopped node's
   * items over.
   */
  public static final Duration IDLE_TRANSACTION_LIMIT = Duration.ofSeconds(5);

  /**
   * The SQL every pooled connection runs once when opened: on PostgreSQL the limit above; none on
   * the embedded H2, whose one node cannot be stopped apart from its database.
   */
  public Optional<String> sessionSetupSql() {
    return kind == Kind.POSTGRESQL
        ? Optional.of(
            "SET idle_in_transaction_session_timeout = " + IDLE_TRANSACTION_LIMIT.toMillis())
        : Optional.empty();
  }

  /** Creates or upgrades the schema; returns how many migrations ran. */
  public int migrate() {
    MigrateResult result =
        Flyway.configure()
            .dataSource(url, user, password)
            .locations("classpath:db/migration/" + kind.migrationFolder)
            .table("fencekeeper_schema_history")
            .load()
            .migrate();
    return result.migrationsExecuted;
  }

  /**
   * PostgreSQL: the journal writes a batch of events as one multi-row INSERT instead of one
   * statement per row (the driver rewrites the JDBC batch), so a batch costs the server one
   * statement, not hundreds.
   */
  private Config driverProperties(String base) {
    return kind == Kind.POSTGRESQL
        ? ConfigFactory.parseMap(
            Map.of(
                base + ".db.properties.reWriteBatchedInserts",
                "true",
                base + ".db.connectionInitSql",
                sessionSetupSql().orElseThrow()))
        : ConfigFactory.empty();
  }

  /** The slick settings of the one pool that journal, snapshots and read journal share. */
  public Config pekkoConfig() {
    String base = "pekko-persistence-jdbc.shared-databases.fencekeeper";
    return ConfigFactory.parseMap(
            Map.of(
                base + ".profile",
                kind.slickProfile,
                base + ".db.url",
                url,
                base + ".db.user",
                user,
                base + ".db.password",
                password,
                base + ".db.driver",
                kind.driver,
                base + ".db.numThreads",
                maxConnections,
                base + ".db.maxConnections",
                maxConnections,
                base + ".db.minConnections",
                Math.min(2, maxConnections),
                base + ".db.connectionPool",
                "HikariCP",
                base + ".db.connectionTimeout",
                30000))
        .withValue(base + ".db.keepAliveConnection", ConfigValueFactory.fromAnyRef(true))
        .withFallback(driverProperties(base));
  }
}

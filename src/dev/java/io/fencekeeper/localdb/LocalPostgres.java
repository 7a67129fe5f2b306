package io.fencekeeper.localdb;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fencekeeper-postgres} ({@code target/fencekeeper-postgres.jar}, a developer tool beside
 * the product jar, which carries no PostgreSQL): a local PostgreSQL for a local cluster
 * (scripts/local-cluster.sh, scripts/scale-out.sh) from zonky's embedded binaries, so nothing is
 * installed. Unlike the tests' throw-away server it keeps its data directory, listens on a fixed
 * port on loopback only, and is durable (fsync, synchronous commit, full-page writes): a journal
 * that survives a power cut is the point of a journal. It runs until SIGTERM, then stops PostgreSQL
 * cleanly (a fast shutdown: sessions are ended, a checkpoint is written) before the process exits.
 * Its default port is 15432, not PostgreSQL's 5432, where a system PostgreSQL usually listens.
 */
@Command(
    name = "fencekeeper-postgres",
    mixinStandardHelpOptions = true,
    version = "fencekeeper-postgres 0.1.0",
    description =
        "Run a local, durable PostgreSQL (embedded binaries, loopback only) until SIGTERM and"
            + " print its JDBC URL: the journal of a local cluster.")
public final class LocalPostgres implements Callable<Integer> {

  private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  /** Its own port: 5432 is where a system PostgreSQL usually listens. */
  static final int DEFAULT_PORT = 15432;

  /** EX_UNAVAILABLE: the port is taken; nothing was started or changed. */
  static final int PORT_TAKEN = 69;

  @Option(
      names = "--data-dir",
      required = true,
      description = "PostgreSQL's data directory; created (initdb) when empty, reused otherwise")
  Path dataDir;

  @Option(names = "--port", description = "port on 127.0.0.1 (default: ${DEFAULT-VALUE})")
  int port = DEFAULT_PORT;

  @Option(
      names = "--database",
      description = "database (and role of the same name) to create (default: ${DEFAULT-VALUE})")
  String database = "fencekeeper";

  @Option(
      names = "--log-file",
      description = "the server's log (default: <data-dir>.log, beside the data directory)")
  Path logFile;

  @Option(
      names = "--binaries-dir",
      description =
          "where PostgreSQL's binaries are unpacked once"
              + " (default: <tmp>/fencekeeper-postgres-<user>)")
  Path binariesDir;

  public static void main(String[] args) {
    System.exit(new CommandLine(new LocalPostgres()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (!NAME.matcher(database).matches()) {
      System.err.println("--database must be a lower-case SQL name: " + database);
      return 64;
    }
    if (!portFree(port)) {
      System.err.println(
          "port "
              + port
              + " on 127.0.0.1 is taken (another PostgreSQL, or a local cluster already running?):"
              + " stop what listens there or choose another with --port");
      return PORT_TAKEN;
    }
    Path data = dataDir.toAbsolutePath().normalize();
    Path log = logFile != null ? logFile : data.resolveSibling(data.getFileName() + ".log");
    Files.createDirectories(log.toAbsolutePath().getParent());
    Path binaries =
        binariesDir != null ? binariesDir.toAbsolutePath() : PostgresBinaries.defaultRoot();
    EmbeddedPostgres server =
        PostgresBinaries.builder(binaries)
            .setDataDirectory(data)
            .setCleanDataDirectory(false) // a journal, not a fixture: keep it across restarts
            .setPort(port)
            .setServerConfig("listen_addresses", "127.0.0.1")
            // durable: the embedded defaults trade these away for test speed
            .setServerConfig("fsync", "on")
            .setServerConfig("synchronous_commit", "on")
            .setServerConfig("full_page_writes", "on")
            .setServerConfig("max_connections", "200")
            .setOutputRedirector(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .setErrorRedirector(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .setPGStartupWait(Duration.ofSeconds(120))
            .start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  stopCleanly(server, data);
                  stopped.countDown();
                },
                "postgres-shutdown"));
    createDatabase(server);
    System.out.println(
        "postgres ready: jdbc:postgresql://127.0.0.1:"
            + port
            + "/"
            + database
            + " (user "
            + database
            + ", no password: trust authentication on loopback only; data "
            + data
            + ", log "
            + log
            + ")");
    System.out.flush();
    stopped.await();
    return 0;
  }

  /**
   * Whether nothing listens on the port yet: PostgreSQL's own failure would come after initdb and a
   * wait, in its log, as "could not bind". A server bound to all interfaces takes 127.0.0.1 too.
   */
  static boolean portFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true); // as PostgreSQL does: a port in TIME_WAIT is free
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** The role and database the nodes connect as, created on the first start. */
  private void createDatabase(EmbeddedPostgres server) throws SQLException {
    try (Connection c = server.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      if (!exists(c, "SELECT 1 FROM pg_roles WHERE rolname = ?")) {
        s.execute("CREATE ROLE " + database + " LOGIN");
      }
      if (!exists(c, "SELECT 1 FROM pg_database WHERE datname = ?")) {
        s.execute("CREATE DATABASE " + database + " OWNER " + database);
      }
    }
  }

  private boolean exists(Connection c, String query) throws SQLException {
    try (PreparedStatement p = c.prepareStatement(query)) {
      p.setString(1, database);
      try (ResultSet rs = p.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * A fast shutdown through pg_ctl, then waiting for the postmaster to remove its pid file: pg_ctl
   * gives up waiting after 5 s, but the server must have finished its shutdown checkpoint before
   * this process reports it stopped.
   */
  private static void stopCleanly(EmbeddedPostgres server, Path data) {
    try {
      server.close();
    } catch (IOException e) {
      System.err.println("postgres: stopping failed: " + e);
    }
    Path pid = data.resolve("postmaster.pid");
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (Files.exists(pid) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
    }
    System.err.println(
        Files.exists(pid)
            ? "postgres: still shutting down after 60 s; see " + pid
            : "postgres stopped cleanly");
  }
}

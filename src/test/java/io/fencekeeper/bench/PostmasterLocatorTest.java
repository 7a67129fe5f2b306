package io.fencekeeper.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench finds its own PostgreSQL server among the machine's processes, and only that one: from
 * a /proc laid out by the test, and on two real servers at once.
 */
class PostmasterLocatorTest {

  @TempDir Path proc;

  @AfterAll
  static void stopTheBenchServer() {
    BenchDatabase.stopEmbedded();
  }

  @Test
  void theBackendsParentIsThePostmasterWhenItStartedWhenTheServerSays() throws Exception {
    Files.writeString(proc.resolve("stat"), "cpu  1 2 3 4 5 6 7 8 0 0\nbtime 1700000000\n");
    ProcessCpuTest.process(proc, 100, "postgres", 1, 0, 0, 0, 0, 12_345);
    ProcessCpuTest.process(proc, 101, "postgres", 100, 0, 0, 0, 0, 20_000);
    ProcessCpuTest.process(proc, 102, "java", 1, 0, 0, 0, 0, 20_000);
    double started = 1700000000 + 123.45;

    ProcessCpu found = PostmasterLocator.locate(proc, 101, started);
    assertTrue(found.measured(), found.description());
    assertEquals(100, found.rootPid());

    // a pid of another PID namespace (a server in a container) that exists here by chance
    assertFalse(PostmasterLocator.locate(proc, 101, started + 3600).measured());
    assertFalse(PostmasterLocator.locate(proc, 102, started).measured());
    assertFalse(PostmasterLocator.locate(proc, 555, started).measured());
  }

  @Test
  void hostsOfAJdbcUrl() {
    assertEquals(
        List.of("127.0.0.1"), PostmasterLocator.hosts("jdbc:postgresql://127.0.0.1:5432/fkb"));
    assertEquals(
        List.of("db1", "db2"),
        PostmasterLocator.hosts("jdbc:postgresql://db1:5432,db2/x?ssl=true"));
    assertEquals(List.of("::1"), PostmasterLocator.hosts("jdbc:postgresql://[::1]:5432/fkb"));
    assertEquals(List.of("localhost"), PostmasterLocator.hosts("jdbc:postgresql:fkb"));
    assertEquals(List.of("localhost"), PostmasterLocator.hosts("jdbc:postgresql:///fkb"));
    assertTrue(PostmasterLocator.isLocal("127.0.0.1"));
    assertTrue(PostmasterLocator.isLocal("localhost"));
    // TEST-NET-1 (RFC 5737): a literal, so nothing is resolved or contacted
    assertFalse(PostmasterLocator.isLocal("192.0.2.1"));
  }

  @Test
  void aRemoteServerIsNotMeasured() throws Exception {
    BenchDatabase db = BenchDatabase.embeddedPostgres(true);
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password())) {
      ProcessCpu cpu = PostmasterLocator.locate(c, "jdbc:postgresql://192.0.2.1:5432/fkb");
      assertFalse(cpu.measured());
      assertTrue(cpu.description().contains("another host"), cpu.description());
    }
  }

  @Test
  void theEmbeddedServerIsDurableAndOnlyItsOwnProcessesCount() throws Exception {
    BenchDatabase bench = BenchDatabase.embeddedPostgres(true);
    assertTrue(bench.settings().durable(), bench.settings().toString());
    assertEquals("on", bench.settings().fsync());
    assertEquals("on", bench.settings().synchronousCommit());
    assertEquals("on", bench.settings().fullPageWrites());
    assertTrue(bench.server().measured(), bench.server().description());
    assertEquals(postmasterPidFile(bench.url(), bench.user()), bench.server().rootPid());

    // another PostgreSQL server on the same machine, as other people's tests run one
    TestDatabases.Target other = TestDatabases.freshPostgres();
    ProcessCpu otherServer;
    try (Connection c = DriverManager.getConnection(other.url(), other.user(), other.password())) {
      otherServer = PostmasterLocator.locate(c, other.url());
    }
    assertTrue(otherServer.measured(), otherServer.description());
    assertTrue(otherServer.rootPid() != bench.server().rootPid());

    long benchUsed;
    long otherUsed;
    try (Connection c = DriverManager.getConnection(other.url(), other.user(), other.password());
        Statement s = c.createStatement()) {
      long benchBefore = bench.server().ticks();
      long otherBefore = otherServer.ticks();
      for (int i = 0; i < 3; i++) {
        s.executeQuery("SELECT count(*) FROM generate_series(1, 4000000)").close();
      }
      // read while the session's backend is alive: once it exits, its CPU reaches the
      // postmaster's children's times only when the postmaster reaps it, which a loaded machine
      // delays (a full run read 1 tick here)
      benchUsed = bench.server().ticks() - benchBefore;
      otherUsed = otherServer.ticks() - otherBefore;
    }
    assertTrue(otherUsed >= 20, "the other server's work is its own CPU: " + otherUsed + " ticks");
    assertTrue(
        benchUsed * 4 < otherUsed,
        "the bench's server was idle ("
            + benchUsed
            + " ticks) while the other worked ("
            + otherUsed
            + ")");
  }

  /** The postmaster's pid as PostgreSQL writes it, first line of postmaster.pid in its data dir. */
  private static long postmasterPidFile(String url, String user)
      throws SQLException, java.io.IOException {
    try (Connection c = DriverManager.getConnection(url, user, "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW data_directory")) {
      rs.next();
      return Long.parseLong(
          Files.readAllLines(Path.of(rs.getString(1), "postmaster.pid")).get(0).trim());
    }
  }
}

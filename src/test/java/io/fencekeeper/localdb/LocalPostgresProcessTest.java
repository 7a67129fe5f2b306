package io.fencekeeper.localdb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.FreePorts;
import io.fencekeeper.testing.ProcessTest;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fencekeeper-postgres}, the local cluster's journal: a real process that prints its JDBC
 * URL, runs durable, stops cleanly on SIGTERM, and keeps what was committed for its next start;
 * that says so when its port is taken; and that starts after a first start was killed while it
 * unpacked PostgreSQL's binaries (issue 22: every embedded PostgreSQL on the machine failed after
 * that).
 */
@ProcessTest
class LocalPostgresProcessTest {

  private static final Pattern READY = Pattern.compile("postgres ready: (jdbc:postgresql:\\S+)");

  @Test
  void durableServerStopsCleanlyOnSigtermAndKeepsItsDataForTheNextStart(@TempDir Path dir)
      throws Exception {
    Path data = dir.resolve("pg");
    int port = FreePorts.next();

    Process first = start(data, port, dir.resolve("first.out"));
    try {
      String url = awaitUrl(first, dir.resolve("first.out"));
      assertEquals("jdbc:postgresql://127.0.0.1:" + port + "/fencekeeper", url);
      try (Connection c = DriverManager.getConnection(url, "fencekeeper", "");
          Statement s = c.createStatement()) {
        for (String setting : List.of("fsync", "synchronous_commit", "full_page_writes")) {
          assertEquals("on", show(s, setting), setting);
        }
        assertEquals("127.0.0.1", show(s, "listen_addresses"));
        s.execute("CREATE TABLE kept (id INT PRIMARY KEY)");
        s.execute("INSERT INTO kept VALUES (42)");
      }
    } finally {
      first.destroy(); // SIGTERM
    }
    assertTrue(first.waitFor(90, TimeUnit.SECONDS), "stops after SIGTERM");
    String firstOut = Files.readString(dir.resolve("first.out"));
    assertTrue(firstOut.contains("postgres stopped cleanly"), firstOut);
    assertFalse(Files.exists(data.resolve("postmaster.pid")), "no server left running");

    Process second = start(data, port, dir.resolve("second.out"));
    try {
      String url = awaitUrl(second, dir.resolve("second.out"));
      try (Connection c = DriverManager.getConnection(url, "fencekeeper", "");
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT id FROM kept")) {
        assertTrue(rs.next(), "the committed row survived the restart");
        assertEquals(42, rs.getInt(1));
      }
    } finally {
      second.destroy();
      assertTrue(second.waitFor(90, TimeUnit.SECONDS), "stops after SIGTERM");
    }
  }

  @Test
  void aTakenPortIsRefusedNamingThePortAndNothingIsCreated(@TempDir Path dir) throws Exception {
    Path data = dir.resolve("pg");
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      Process process = start(data, port, dir.resolve("taken.out"));
      assertTrue(process.waitFor(60, TimeUnit.SECONDS), "refuses at once");
      String out = Files.readString(dir.resolve("taken.out"));
      assertEquals(LocalPostgres.PORT_TAKEN, process.exitValue(), out);
      assertTrue(out.contains("port " + port + " on 127.0.0.1 is taken"), out);
      assertTrue(out.contains("--port"), "says how to choose another: " + out);
      assertFalse(out.contains("Exception"), "a sentence, not a stack trace: " + out);
      assertFalse(Files.exists(data), "no data directory was created");
    }
    // and its own default, away from a system PostgreSQL's 5432
    Process help = start(List.of("--help"), dir.resolve("help.out"));
    assertTrue(help.waitFor(60, TimeUnit.SECONDS));
    String usage = Files.readString(dir.resolve("help.out"));
    assertEquals(0, help.exitValue(), usage);
    assertTrue(usage.contains("port on 127.0.0.1 (default: 15432)"), usage);
  }

  /**
   * kill -9 while the first start unpacks the binaries into a fresh extraction directory (what a
   * machine that never unpacked them has), then start again: it starts, on a whole unpacking.
   */
  @Test
  void aStartKilledWhileItUnpacksLeavesNothingTheNextStartTrusts(@TempDir Path dir)
      throws Exception {
    Path binaries = dir.resolve("binaries");
    Process first = startUnpackingInto(binaries, dir, "first.out");
    Path unpacking =
        Await.until(
            Duration.ofSeconds(60),
            "the first start unpacking into " + binaries,
            () -> halfUnpacked(binaries, first, dir.resolve("first.out")),
            found -> found != null);
    first.destroyForcibly(); // SIGKILL, half-way through
    assertTrue(first.waitFor(30, TimeUnit.SECONDS));
    assertTrue(Files.isDirectory(unpacking), "the killed start left its partial unpacking");
    assertEquals(List.of(), whole(binaries), "and nothing under the name of a whole one");

    Process second = startUnpackingInto(binaries, dir, "second.out");
    try {
      String url = awaitUrl(second, dir.resolve("second.out"));
      try (Connection c = DriverManager.getConnection(url, "fencekeeper", "");
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_tables")) {
        assertTrue(rs.next(), "the server answers");
      }
      assertFalse(Files.exists(unpacking), "the leftover was cleared");
      List<Path> unpacked = whole(binaries);
      assertEquals(1, unpacked.size(), unpacked.toString());
      assertTrue(Files.isExecutable(unpacked.get(0).resolve("bin/postgres")));
    } finally {
      second.destroy();
      assertTrue(second.waitFor(90, TimeUnit.SECONDS), "stops after SIGTERM");
    }
  }

  private static Process startUnpackingInto(Path binaries, Path dir, String out)
      throws IOException {
    List<String> args =
        List.of(
            "--data-dir",
            dir.resolve("pg").toString(),
            "--port",
            String.valueOf(FreePorts.next()),
            "--binaries-dir",
            binaries.toString());
    return start(args, dir.resolve(out));
  }

  /** The partial directory once it holds some files, or null while there is none yet. */
  private static Path halfUnpacked(Path binaries, Process process, Path out) {
    if (!process.isAlive()) {
      throw new AssertionError("exited before it was killed: " + tail(out));
    }
    if (!whole(binaries).isEmpty()) {
      throw new AssertionError("unpacked before it could be killed: " + whole(binaries));
    }
    try (Stream<Path> entries = Files.list(binaries)) {
      for (Path entry : entries.toList()) {
        if (entry.getFileName().toString().endsWith(".unpacking")
            && Files.isDirectory(entry.resolve("share"))) {
          return entry;
        }
      }
      return null;
    } catch (IOException e) {
      return null; // not created yet
    }
  }

  /** Directories under their final name, PG-<md5>. */
  private static List<Path> whole(Path binaries) {
    try (Stream<Path> entries = Files.list(binaries)) {
      return entries
          .filter(p -> p.getFileName().toString().matches("PG-[0-9a-f]{32}"))
          .filter(Files::isDirectory)
          .toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  private static String tail(Path out) {
    try {
      return Files.readString(out);
    } catch (IOException e) {
      return "(no output)";
    }
  }

  private static String show(Statement s, String setting) throws Exception {
    try (ResultSet rs = s.executeQuery("SHOW " + setting)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static Process start(Path data, int port, Path out) throws IOException {
    return start(List.of("--data-dir", data.toString(), "--port", String.valueOf(port)), out);
  }

  /** The developer jar's main class in a JVM as small as the scripts give it (-Xmx64m). */
  private static Process start(List<String> args, Path out) throws IOException {
    String classpath = System.getProperty("surefire.test.class.path");
    if (classpath == null || classpath.isBlank()) {
      classpath = System.getProperty("java.class.path");
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(
        List.of("-Xmx64m", "-XX:+UseSerialGC", "-cp", classpath, LocalPostgres.class.getName()));
    command.addAll(args);
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(out.toFile())
        .start();
  }

  private static String awaitUrl(Process process, Path out) {
    return Await.until(
        Duration.ofSeconds(120),
        "postgres ready in " + out,
        () -> {
          try {
            String text = Files.readString(out);
            Matcher m = READY.matcher(text);
            if (m.find()) {
              return m.group(1);
            }
            if (!process.isAlive()) {
              throw new AssertionError("postgres exited: " + text);
            }
            return null;
          } catch (IOException e) {
            return null;
          }
        },
        url -> url != null);
  }
}

package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.Await;
import java.io.IOException;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fencekeeper postgres}, the local cluster's journal: a real process that prints its JDBC
 * URL, runs durable, stops cleanly on SIGTERM, and keeps what was committed for its next start.
 */
class PostgresCommandProcessTest {

  private static final Pattern READY = Pattern.compile("postgres ready: (jdbc:postgresql:\\S+)");

  @Test
  void durableServerStopsCleanlyOnSigtermAndKeepsItsDataForTheNextStart(@TempDir Path dir)
      throws Exception {
    Path data = dir.resolve("pg");
    int port = freePort();

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

  private static String show(Statement s, String setting) throws Exception {
    try (ResultSet rs = s.executeQuery("SHOW " + setting)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static Process start(Path data, int port, Path out) throws IOException {
    String classpath = System.getProperty("surefire.test.class.path");
    if (classpath == null || classpath.isBlank()) {
      classpath = System.getProperty("java.class.path");
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of("-Xmx64m", "-cp", classpath, "io.fencekeeper.cli.Main", "postgres"));
    command.addAll(List.of("--data-dir", data.toString(), "--port", String.valueOf(port)));
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

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}

package io.fencekeeper.localdb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The unpacking issue 22 found broken: what a process killed half-way leaves behind (some of {@code
 * share/} and {@code lib/}, the {@code lib/libpq.so} link that made every later start fail with
 * FileAlreadyExistsException, a truncated file, no {@code bin/}) is cleared, and zonky runs on the
 * whole unpacking without unpacking anything itself.
 */
class PostgresBinariesTest {

  @Test
  void aKilledUnpackingsLeftoverIsReplacedByAWholeOneThatZonkyTakesAsItIs(@TempDir Path root)
      throws Exception {
    Path scratch = Files.createDirectory(root.resolve("scratch"));
    String name = PostgresBinaries.unpacked(scratch).getFileName().toString();
    Path leftover = Files.createDirectories(root.resolve("extract").resolve(name + ".unpacking"));
    Files.createDirectories(leftover.resolve("lib"));
    Files.createSymbolicLink(leftover.resolve("lib/libpq.so"), Path.of("libpq.so.5.14"));
    Files.writeString(leftover.resolve("lib/libpq.so.5.14"), "truncated");
    Files.createDirectories(leftover.resolve("share/postgresql"));

    Path whole = PostgresBinaries.unpacked(root.resolve("extract"));

    assertEquals(root.resolve("extract").resolve(name), whole);
    assertFalse(Files.exists(leftover), "the leftover is gone");
    assertTrue(Files.isExecutable(whole.resolve("bin/postgres")), "bin/postgres is there");
    assertTrue(Files.isSymbolicLink(whole.resolve("lib/libpq.so")));
    assertTrue(
        Files.size(whole.resolve("lib/libpq.so")) > 100_000, "the link leads to the whole library");
    assertEquals(filesIn(scratch.resolve(name)), filesIn(whole), "the same files as a clean run");

    FileTime marked = Files.getLastModifiedTime(whole.resolve(".exists"));
    try (EmbeddedPostgres server = PostgresBinaries.builder(root.resolve("extract")).start();
        Connection c = server.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT 1")) {
      assertTrue(rs.next(), "PostgreSQL runs from it");
    }
    // zonky touches its marker whenever it unpacks (over) a directory
    assertEquals(
        marked, Files.getLastModifiedTime(whole.resolve(".exists")), "zonky unpacked none");
  }

  /** zonky makes its working directory writable by all: what another user put there never runs. */
  @Test
  void binariesAnotherUserPutThereAreRefusedNotRun(@TempDir Path root) throws Exception {
    String name =
        PostgresBinaries.unpacked(PostgresBinaries.defaultRoot()).getFileName().toString();
    Path planted = Files.createDirectories(root.resolve(name).resolve("bin"));
    UserPrincipal nobody;
    try {
      nobody = root.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
      Files.setOwner(planted.getParent(), nobody);
    } catch (IOException | UnsupportedOperationException e) {
      Assumptions.abort("giving a directory to another user needs root: " + e);
      return;
    }
    IOException refused = assertThrows(IOException.class, () -> PostgresBinaries.unpacked(root));
    assertTrue(refused.getMessage().contains("belongs to nobody"), refused.getMessage());
  }

  private static List<String> filesIn(Path dir) throws Exception {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.map(p -> dir.relativize(p).toString()).sorted().toList();
    }
  }
}

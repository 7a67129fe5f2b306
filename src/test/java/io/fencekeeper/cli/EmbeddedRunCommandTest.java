package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The README's quick start: {@code run --accounts FILE} on the embedded node reads a file from
 * anywhere (the command line is the trusted local user), though the node itself only reads CSV
 * scopes from its scope directory.
 */
class EmbeddedRunCommandTest {

  @Test
  void anAccountsFileOutsideTheScopeDirectoryIsRunToTheEnd(@TempDir Path dir) throws Exception {
    Path accounts = dir.resolve("elsewhere").resolve("accounts.csv");
    Files.createDirectories(accounts.getParent());
    Files.writeString(accounts, "accountId,cursor\nacct-1,c-1\nacct-2,c-1\nacct-3,c-2\n");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream saved = System.out;
    int exit;
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      exit =
          new CommandLine(new RunCommand())
              .execute(
                  "--job",
                  "quick-start",
                  "--date",
                  "2026-11-29",
                  "--accounts",
                  accounts.toString(),
                  "--data-dir",
                  dir.resolve("data").toString(),
                  "--workers",
                  "2");
    } finally {
      System.setOut(saved);
    }

    String output = bytes.toString(StandardCharsets.UTF_8);
    assertEquals(0, exit, output);
    assertTrue(output.contains("created run quick-start/2026-11-29 with 3 items"), output);
    assertTrue(output.contains("SUCCEEDED"), output);
  }
}

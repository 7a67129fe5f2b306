package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.sim.SimProviderServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The README's quick start: {@code run --accounts FILE} on the embedded node reads a file from
 * anywhere (the command line is the trusted local user), though the node itself only reads CSV
 * scopes from its scope directory.
 */
class EmbeddedRunCommandTest {

  record Result(int exit, String output) {}

  /** {@code run ARGS} on an embedded node, its standard output captured. */
  static Result run(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream saved = System.out;
    int exit;
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      exit = new CommandLine(new RunCommand()).execute(args);
    } finally {
      System.setOut(saved);
    }
    return new Result(exit, bytes.toString(StandardCharsets.UTF_8));
  }

  @Test
  void anAccountsFileOutsideTheScopeDirectoryIsRunToTheEnd(@TempDir Path dir) throws Exception {
    Path accounts = dir.resolve("elsewhere").resolve("accounts.csv");
    Files.createDirectories(accounts.getParent());
    Files.writeString(accounts, "accountId,cursor\nacct-1,c-1\nacct-2,c-1\nacct-3,c-2\n");
    Result result =
        run(
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

    String output = result.output();
    assertEquals(0, result.exit(), output);
    assertTrue(output.contains("created run quick-start/2026-11-29 with 3 items"), output);
    assertTrue(output.contains("SUCCEEDED"), output);
  }

  /** {@code --verify}: the run verifies itself when it ends, and the verdict is in the report. */
  @Test
  void withVerifyTheReportEndsWithTheProvidersVerdict(@TempDir Path dir) throws Exception {
    Path accounts = dir.resolve("accounts.csv");
    Files.writeString(
        accounts, "accountId,cursor\nacct-1,c-1\nacct-2,c-1\nacct-3,c-2\nacct-4,c-2\n");
    Result result =
        run(
            "--job",
            "self-verified",
            "--date",
            "2026-11-29",
            "--accounts",
            accounts.toString(),
            "--data-dir",
            dir.resolve("data").toString(),
            "--workers",
            "2",
            "--verify");

    String output = result.output();
    assertEquals(0, result.exit(), output);
    assertTrue(
        output.contains(
            "verification      AGREE: 4 of 4 items checked at the provider; missing 0, different 0,"
                + " unexpected effect 0, resolved 0"),
        output);
  }

  /**
   * {@code --verify} whose verification does not agree exits as {@code verify} does (4), whatever
   * the run's state: here a second system wrote an effect under one item's key before the run, so
   * the provider has an effect the journal does not (the item fails on it, 422 key_reused).
   */
  @Test
  void withVerifyARunWhoseVerificationFindsDiscrepanciesExitsFour(@TempDir Path dir)
      throws Exception {
    Path accounts = dir.resolve("accounts.csv");
    Files.writeString(accounts, "accountId,cursor\nacct-1,c-1\nacct-2,c-1\n");
    try (SimProviderServer sim = SimProviderServer.start(0)) {
      sim.writeForeignEffect(
          ItemId.of("disagreeing", LocalDate.parse("2026-11-29"), "acct-1", "c-1")
              .idempotencyKey());
      Result result =
          run(
              "--job",
              "disagreeing",
              "--date",
              "2026-11-29",
              "--accounts",
              accounts.toString(),
              "--data-dir",
              dir.resolve("data").toString(),
              "--workers",
              "2",
              "--provider",
              "http",
              "--provider-url",
              sim.baseUrl().toString(),
              "--verify");

      String output = result.output();
      assertTrue(output.contains("verification      DISCREPANCIES"), output);
      assertEquals(VerifyCommand.DISCREPANCIES, result.exit(), output);
    }
  }
}

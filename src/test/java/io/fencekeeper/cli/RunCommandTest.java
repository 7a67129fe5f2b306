package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.Counts;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * What the {@code run} command decides for the person at the terminal, beside the quick start
 * ({@link EmbeddedRunCommandTest}): a provider it cannot run is a usage error before any node
 * starts; a run that exists is reported and not run again (no call reaches the provider); the
 * report names the end, its reason, the items by status and the throughput.
 */
class RunCommandTest {

  record Result(int exit, String out, String err) {}

  /** {@code run ARGS} in this JVM, its standard output and error captured. */
  static Result run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream savedOut = System.out;
    PrintStream savedErr = System.err;
    int exit;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      exit = new CommandLine(new RunCommand()).execute(args);
    } finally {
      System.setOut(savedOut);
      System.setErr(savedErr);
    }
    return new Result(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static String[] args(Path accounts, Path dataDir, String... more) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--job",
                "rerun",
                "--date",
                "2026-11-29",
                "--accounts",
                accounts.toString(),
                "--data-dir",
                dataDir.toString(),
                "--workers",
                "2"));
    all.addAll(List.of(more));
    return all.toArray(String[]::new);
  }

  @Test
  void aProviderItCannotRunIsAUsageErrorBeforeAnyNodeStarts(@TempDir Path dir) {
    Path accounts = dir.resolve("accounts.csv");
    Path data = dir.resolve("data");

    Result httpWithoutUrl = run(args(accounts, data, "--provider", "http"));
    Result jdbc = run(args(accounts, data, "--provider", "jdbc"));
    Result unknown = run(args(accounts, data, "--provider", "ftp"));
    Result javaWithoutClass = run(args(accounts, data, "--provider", "java"));
    Result classWithoutJava =
        run(args(accounts, data, "--provider-class", "com.acme.LedgerProvider"));

    String kinds =
        "--provider must be sim, http with --provider-url, or java with --provider-class and"
            + " --provider-path";
    assertEquals(64, httpWithoutUrl.exit());
    assertEquals("--provider http needs --provider-url", httpWithoutUrl.err().strip());
    assertEquals(64, jdbc.exit());
    assertEquals(kinds, jdbc.err().strip());
    assertEquals(64, unknown.exit());
    assertEquals(kinds, unknown.err().strip());
    assertEquals(64, javaWithoutClass.exit());
    assertEquals(
        "--provider java needs --provider-class and --provider-path",
        javaWithoutClass.err().strip());
    assertEquals(64, classWithoutJava.exit());
    assertEquals(
        "--provider-class, --provider-path and --provider-setting are for --provider java",
        classWithoutJava.err().strip());
    assertTrue(Files.notExists(data), "no node started, no database made");
  }

  /** What a retry from cron meets: the night already ran, so nothing runs again. */
  @Test
  void aRunThatExistsIsReportedAndNotRunAgain(@TempDir Path dir) throws Exception {
    Path accounts = dir.resolve("accounts.csv");
    Files.writeString(accounts, "accountId,cursor\nacct-1,c-1\nacct-3,c-1\n");
    Path data = dir.resolve("data");
    Result first = run(args(accounts, data));
    assertEquals(0, first.exit(), first.out() + first.err());
    // both accounts need a cleanup at the sim (one in ten does not)
    assertTrue(first.out().contains("provider effects  2 keys, at most 1 per key"), first.out());

    Result again = run(args(accounts, data));

    assertEquals(0, again.exit(), "the exit code of how the run ended: " + again.err());
    assertTrue(
        again.out().contains("run rerun/2026-11-29 exists (SUCCEEDED): reporting it, no new work"),
        again.out());
    assertTrue(again.out().contains("2 total, 2 done"), again.out());
    assertFalse(again.out().contains("provider effects"), "no call reached the provider");
  }

  @Test
  void theReportNamesTheEndItsReasonTheItemsByStatusAndTheThroughput() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    RunView partial =
        view(
            RunState.PARTIAL,
            new Counts(50, 1, 1, 40, 5, 3, 0),
            Instant.parse("2026-11-30T01:00:00Z"),
            Instant.parse("2026-11-30T01:00:10Z"),
            "deadline 2026-11-30T01:00:10Z passed");

    RunCommand.report(out, partial, 99, null);

    List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().map(String::strip).toList();
    assertTrue(lines.contains("run nightly/2026-11-29: PARTIAL"), lines.toString());
    assertTrue(lines.contains("reason            deadline 2026-11-30T01:00:10Z passed"));
    assertTrue(
        lines.contains(
            "items             50 total, 40 done, 5 failed, 3 closed, 0 quarantined, 2 pending"),
        "pending counts the leased items too: " + lines);
    assertTrue(lines.contains("throughput        4 items/s"), "done over the run's own time");
    assertEquals(2, partial.state().exitCode());
  }

  static RunView view(RunState state, Counts counts, Instant created, Instant ended, String why) {
    return new RunView(
        "nightly/2026-11-29",
        "nightly",
        "2026-11-29",
        state,
        created,
        created.plusSeconds(3600),
        ended,
        why,
        5,
        10,
        0,
        counts,
        0,
        0,
        null,
        0,
        0,
        0,
        0,
        0,
        0,
        Map.of(),
        null,
        null,
        "scope-1",
        null,
        null,
        null);
  }
}

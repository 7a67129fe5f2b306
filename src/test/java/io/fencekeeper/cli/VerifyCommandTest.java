package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.verify.VerifyFixture;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code fencekeeper verify RUN} against a node's HTTP API: its exit code says whether the provider
 * agrees (0), disagrees (4) or could not be asked (5), and it prints and exports the findings.
 */
class VerifyCommandTest {

  static final String TOKEN = "verify-cli-token-0123456789";

  static VerifyFixture f;
  static String base;

  @BeforeAll
  static void start() throws Exception {
    f = new VerifyFixture(TestDatabases::h2File, 13);
    f.startNode(4, Map.of());
    base = f.startApi(TOKEN, new ApiMetrics());
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  record Result(int exit, String out, String err) {}

  static Result verify(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream savedOut = System.out;
    PrintStream savedErr = System.err;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    int exit;
    try {
      String[] all = new String[args.length + 4];
      System.arraycopy(new String[] {"--url", base, "--token", TOKEN}, 0, all, 0, 4);
      System.arraycopy(args, 0, all, 4, args.length);
      exit = new CommandLine(new VerifyCommand()).execute(all);
    } finally {
      System.setOut(savedOut);
      System.setErr(savedErr);
    }
    return new Result(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static RunView finishedRun(String job, int items) throws Exception {
    return f.awaitEnded(f.create(job, VerifyFixture.accounts(items)).runId());
  }

  @Test
  void everythingAgreesExitsZeroAndStatesTheSample() throws Exception {
    RunView run = finishedRun("cli-agree", 25);

    Result all = verify(run.runId());
    Result sample = verify(run.runId(), "--sample", "6", "--seed", "1234");

    assertEquals(0, all.exit(), all.out() + all.err());
    assertTrue(all.out().contains("AGREE: 25 checked of every item (25)"), all.out());
    assertEquals(0, sample.exit(), sample.out() + sample.err());
    assertTrue(sample.out().contains("a sample of 6 of 25 items, seed 1234"), sample.out());
  }

  @Test
  void discrepanciesExitFourArePrintedAndExported(@TempDir Path dir) throws Exception {
    RunView run = finishedRun("cli-lost", 25);
    List<AccountCursor> accounts = VerifyFixture.accounts(25);
    ItemId lost = null;
    for (AccountCursor account : accounts) {
      ItemId id = ItemId.of("cli-lost", VerifyFixture.DATE, account.accountId(), account.cursor());
      if (f.sim.loseEffect(id.idempotencyKey())) {
        lost = id;
        break;
      }
    }
    Path csv = dir.resolve("findings.csv");

    Result result = verify(run.runId(), "--all", "-o", csv.toString());

    assertEquals(4, result.exit(), result.out() + result.err());
    assertTrue(result.out().contains("DISCREPANCIES"), result.out());
    assertTrue(result.out().contains("missing 1"), result.out());
    assertTrue(result.out().contains("MISSING") && result.out().contains(lost.value()));
    List<String> lines = Files.readAllLines(csv);
    assertEquals(2, lines.size(), lines.toString());
    assertTrue(lines.get(1).startsWith(lost.value() + "," + lost.idempotencyKey() + ",MISSING"));
  }

  @Test
  void aCheckThatCannotCompleteExitsFiveWithTheReason() throws Exception {
    RunView run = finishedRun("cli-refused", 4);
    Result result;
    f.refuseLookups();
    try {
      result = verify(run.runId());
    } finally {
      f.acceptLookups();
    }

    assertEquals(5, result.exit(), result.out() + result.err());
    assertTrue(result.out().contains("INCOMPLETE"), result.out());
    assertTrue(result.out().contains("could not complete: the lookup of item"), result.out());
  }

  @Test
  void badUsageAndRefusalsAreNotVerdicts() throws Exception {
    RunView run = finishedRun("cli-usage", 2);

    assertEquals(64, verify(run.runId(), "--seed", "5").exit());
    assertEquals(64, verify(run.runId(), "--sample", "0").exit());
    assertEquals(2, verify(run.runId(), "--sample", "3", "--all").exit(), "picocli: exclusive");
    Result unknown = verify("nobody/2026-11-29");
    assertEquals(1, unknown.exit());
    assertTrue(unknown.err().contains("unknown_run"), unknown.err());
  }
}

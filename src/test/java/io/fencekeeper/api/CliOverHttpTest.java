package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.cli.AuditCommand;
import io.fencekeeper.cli.StatusCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The status and audit commands talk to a running node's HTTP API. */
class CliOverHttpTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void statusShowsARunAndAuditShowsTheItemsJournal() {
    String runId = api.createRun(ApiTestNode.newJob("cli"), 1);
    String itemId = ApiTestNode.itemId(runId, 1);
    api.post(
        "/api/items/" + ApiTestNode.seg(itemId) + "/claim",
        "{\"workerId\":\"w-cli\",\"leaseMillis\":30000}");

    String one = run(new StatusCommand(), "--url", api.base, runId);
    assertTrue(one.contains(runId) && one.contains("done 0/1"), one);

    String audit = run(new AuditCommand(), "--url", api.base, itemId);
    assertTrue(audit.contains("LeaseGranted"), audit);
    assertTrue(audit.contains("w-cli"), audit);
    String runs = run(new StatusCommand(), "--url", api.base);
    assertTrue(runs.contains(runId) && runs.contains("RUNNING"), runs);
    assertEquals(1, new CommandLine(new AuditCommand()).execute("--url", api.base, "bad-id"));
  }

  private static String run(Object command, String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream saved = System.out;
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      assertEquals(0, new CommandLine(command).execute(args));
    } finally {
      System.setOut(saved);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }
}

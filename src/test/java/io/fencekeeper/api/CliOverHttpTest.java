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

    String one = run(new StatusCommand(), "--url", api.base, "--token", ApiTestNode.TOKEN, runId);
    assertTrue(one.contains(runId) && one.contains("done 0/1"), one);

    String audit = run(new AuditCommand(), "--url", api.base, "--token", ApiTestNode.TOKEN, itemId);
    assertTrue(audit.contains("LeaseGranted"), audit);
    assertTrue(audit.contains("w-cli"), audit);
    String runs = run(new StatusCommand(), "--url", api.base, "--token", ApiTestNode.TOKEN);
    assertTrue(runs.contains(runId) && runs.contains("RUNNING"), runs);
    assertEquals(
        1,
        new CommandLine(new AuditCommand())
            .execute("--url", api.base, "--token", ApiTestNode.TOKEN, "bad-id"));
  }

  @Test
  void runWithUrlUploadsTheAccountsFileAndWatchesTheRunUntilItEnds() throws Exception {
    String job = ApiTestNode.newJob("cli-upload");
    String runId = job + "/2026-11-29";
    java.nio.file.Path accounts = java.nio.file.Files.createTempFile("accounts", ".csv");
    java.nio.file.Files.writeString(accounts, RunUploadApiTest.csv(25));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream saved = System.out;
    java.util.concurrent.CompletableFuture<Integer> exit;
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      exit =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () ->
                  new CommandLine(new io.fencekeeper.cli.RunCommand())
                      .execute(
                          "--url",
                          api.base,
                          "--token",
                          ApiTestNode.TOKEN,
                          "--job",
                          job,
                          "--date",
                          "2026-11-29",
                          "--accounts",
                          accounts.toString(),
                          "--deadline",
                          ApiTestNode.DEADLINE));
      // the node has no workers: the run stays RUNNING until it is cancelled
      // a GET finds the run as soon as it is STAGING; cancel needs it RUNNING
      ApiTestNode.await(
          () -> api.get("/api/runs/" + ApiTestNode.seg(runId)),
          answer ->
              answer.status() == 200 && answer.tree().path("state").asText().equals("RUNNING"),
          java.time.Duration.ofSeconds(30),
          "the uploaded run to be RUNNING");
      assertEquals(200, api.post("/api/runs/" + ApiTestNode.seg(runId) + "/cancel", null).status());
      assertEquals(3, exit.get(60, java.util.concurrent.TimeUnit.SECONDS), bytes.toString());
    } finally {
      System.setOut(saved);
    }
    String output = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(output.contains("created run " + runId + " with 25 items"), output);
    assertTrue(output.contains("run " + runId + ": CANCELLED"), output);
    assertEquals(
        25,
        api.get("/api/runs/" + ApiTestNode.seg(runId)).tree().path("counts").path("total").asInt());
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

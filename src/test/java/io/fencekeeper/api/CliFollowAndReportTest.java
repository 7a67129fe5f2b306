package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.cli.ReportCommand;
import io.fencekeeper.cli.StatusCommand;
import io.fencekeeper.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code status --follow} reads the run's event stream; {@code report} streams the run report. */
class CliFollowAndReportTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void statusFollowPrintsALinePerUpdateAndExitsWithTheRunsCode() throws Exception {
    String runId = api.createRun(ApiTestNode.newJob("follow"), 2);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream saved = System.out;
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      CompletableFuture<Integer> exit =
          CompletableFuture.supplyAsync(
              () ->
                  new CommandLine(new StatusCommand())
                      .execute("--url", api.base, "--token", ApiTestNode.TOKEN, "--follow", runId));
      Await.until(
          Duration.ofSeconds(30),
          "the first line of the follow",
          () -> bytes.toString(StandardCharsets.UTF_8).contains("RUNNING"));
      // the feed sends the standing run every second: three of them pass before the cancel
      try (var feed =
          io.fencekeeper.api.stream.RunEventStreamsTest.open(
              api, "/api/runs/" + ApiTestNode.seg(runId) + "/events")) {
        for (int i = 0; i < 4; i++) {
          feed.next(api);
        }
      }
      assertEquals(200, api.post("/api/runs/" + ApiTestNode.seg(runId) + "/cancel", null).status());
      assertEquals(3, exit.get(30, TimeUnit.SECONDS), "CANCELLED exits 3, as the run command");
    } finally {
      System.setOut(saved);
    }
    List<String> lines = printed(bytes);
    assertTrue(
        lines.get(0).contains(runId + " RUNNING") && lines.get(0).contains("done 0/2"),
        lines.get(0));
    assertTrue(lines.get(lines.size() - 1).contains(runId + " CANCELLED"), lines.toString());
    for (int i = 1; i < lines.size(); i++) {
      // each line starts with the time it was printed
      assertNotEquals(
          afterTime(lines.get(i - 1)),
          afterTime(lines.get(i)),
          "a line only when the run changed: " + lines);
    }
  }

  /**
   * What the command printed: the node these tests call runs in the same JVM, and its log lines
   * (timestamp first, logback-test.xml) share the captured standard output whenever it logs.
   */
  private static List<String> printed(ByteArrayOutputStream bytes) {
    return bytes
        .toString(StandardCharsets.UTF_8)
        .lines()
        .filter(line -> !LOG_LINE.matcher(line).lookingAt())
        .toList();
  }

  private static String afterTime(String line) {
    return line.substring(line.indexOf(' ') + 1);
  }

  private static final java.util.regex.Pattern LOG_LINE =
      java.util.regex.Pattern.compile(
          "\\d\\d:\\d\\d:\\d\\d\\.\\d{3} (TRACE|DEBUG|INFO|WARN|ERROR) ");

  @Test
  void followNeedsARunIdAndAnUnknownRunIsAnError() {
    assertEquals(
        64,
        new CommandLine(new StatusCommand())
            .execute("--url", api.base, "--token", ApiTestNode.TOKEN, "--follow"));
    assertEquals(
        1,
        new CommandLine(new StatusCommand())
            .execute(
                "--url", api.base, "--token", ApiTestNode.TOKEN, "--follow", "nope/2026-11-29"));
  }

  @Test
  void reportWritesOneLinePerItem() {
    String runId = api.createRun(ApiTestNode.newJob("cli-report"), 3);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream saved = System.out;
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      assertEquals(
          0,
          new CommandLine(new ReportCommand())
              .execute("--url", api.base, "--token", ApiTestNode.TOKEN, runId));
    } finally {
      System.setOut(saved);
    }
    List<String> lines = printed(bytes);
    assertEquals(4, lines.size(), lines.toString());
    assertTrue(lines.get(0).startsWith("itemId,status,attempt"));
    assertTrue(
        lines.get(1).startsWith(ApiTestNode.itemId(runId, 1) + ",PENDING,0,5,NONE"), lines.get(1));
    assertEquals(
        64,
        new CommandLine(new ReportCommand())
            .execute("--url", api.base, "--token", ApiTestNode.TOKEN, "--format", "xml", runId));
  }
}

package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25, item 9: {@code run} as a user starts it (its own process, the jar's logging
 * configuration, terminal output and log on one stream): after the final report nothing but
 * warnings and errors follows, so no "worker pool drained in 3 ms" under the report.
 */
@ProcessTest
class RunCommandQuietProcessTest {

  @Test
  void noInfoLineFollowsTheFinalReport(@TempDir Path dir) throws Exception {
    Path accounts = dir.resolve("accounts.csv");
    StringBuilder csv = new StringBuilder("accountId,cursor\n");
    for (int i = 1; i <= 30; i++) {
      csv.append("acct-").append(i).append(",c-1\n");
    }
    Files.writeString(accounts, csv);
    String classpath = System.getProperty("surefire.test.class.path");
    if (classpath == null || classpath.isBlank()) {
      classpath = System.getProperty("java.class.path");
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(
        List.of(
            "-Xmx256m",
            // the jar's logging, not the tests' (target/test-classes/logback-test.xml)
            "-Dlogback.configurationFile=" + Path.of("conf/logback.xml").toAbsolutePath(),
            "-cp",
            classpath,
            "io.fencekeeper.cli.Main",
            "run",
            "--job",
            "quiet",
            "--date",
            "2026-11-29",
            "--accounts",
            accounts.toString(),
            "--data-dir",
            dir.resolve("data").toString(),
            "--workers",
            "2"));
    Path output = dir.resolve("terminal.txt");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
    builder.environment().remove("FENCEKEEPER_LOG_LEVEL");
    Process run = builder.start();
    assertTrue(run.waitFor(180, TimeUnit.SECONDS), "run ended");
    List<String> lines = Files.readAllLines(output);
    String text = String.join("\n", lines);
    assertEquals(0, run.exitValue(), text);
    int report = lines.indexOf("run quiet/2026-11-29: SUCCEEDED");
    assertTrue(report >= 0, text);
    assertTrue(
        lines.subList(0, report).stream().anyMatch(line -> line.contains(" INFO ")),
        "the node logged at INFO while it ran, so the check below can fail: " + text);
    List<String> after = lines.subList(report, lines.size());
    assertTrue(
        after.stream().noneMatch(line -> line.contains(" INFO ")), "after the report: " + after);
    assertTrue(after.stream().anyMatch(line -> line.startsWith("  attempts")), text);
  }
}

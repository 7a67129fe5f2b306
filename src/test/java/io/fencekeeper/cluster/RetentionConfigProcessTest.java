package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.FreePorts;
import io.fencekeeper.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A retention that cannot work is refused at start, by the {@code serve} process an operator runs,
 * from the environment variables of the README: a retention of 0 or a negative one, and an archive
 * directory the node cannot write (a path under a regular file: permissions would not stop root).
 * The node exits 78 with a message that names the setting, before it opens its journal.
 */
@ProcessTest
class RetentionConfigProcessTest {

  @TempDir Path dir;

  @Test
  void badRetentionSettingsAreRefusedAtStartWithAClearMessage() throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "not a directory");
    Map<String, Map<String, String>> cases = new LinkedHashMap<>();
    cases.put("zero", Map.of("FENCEKEEPER_RETENTION_KEEP_ENDED_RUNS_FOR", "0"));
    cases.put("negative", Map.of("FENCEKEEPER_RETENTION_KEEP_ENDED_RUNS_FOR", "-5d"));
    cases.put(
        "unwritable",
        Map.of("FENCEKEEPER_RETENTION_ARCHIVE_DIR", file.resolve("archive").toString()));
    Map<String, String> expected =
        Map.of(
            "zero",
            "fencekeeper node not started: fencekeeper.retention.keep-ended-runs-for must be longer"
                + " than 0 (or off to keep every run), got '0'",
            "negative",
            "fencekeeper node not started: fencekeeper.retention.keep-ended-runs-for must be longer"
                + " than 0 (or off to keep every run), got '-5d'",
            "unwritable",
            "fencekeeper node not started: fencekeeper.retention.archive-dir "
                + file.resolve("archive")
                + " cannot be created: ");
    // the three at once: each is a JVM start and a refusal
    List<Process> processes = new ArrayList<>();
    for (var c : cases.entrySet()) {
      List<String> command = new ArrayList<>(ChildJvm.command());
      command.addAll(List.of("io.fencekeeper.cli.Main", "serve"));
      ProcessBuilder builder = new ProcessBuilder(command);
      builder.environment().put("FENCEKEEPER_DATA_DIR", dir.resolve(c.getKey()).toString());
      builder.environment().put("FENCEKEEPER_HTTP_PORT", String.valueOf(FreePorts.next()));
      builder.environment().putAll(c.getValue());
      builder.redirectErrorStream(true).redirectOutput(dir.resolve(c.getKey() + ".log").toFile());
      processes.add(builder.start());
    }
    int i = 0;
    for (String name : cases.keySet()) {
      Process process = processes.get(i++);
      assertTrue(process.waitFor(120, TimeUnit.SECONDS), name + " exits");
      String output = Files.readString(dir.resolve(name + ".log"));
      assertEquals(78, process.exitValue(), name + ": " + output);
      assertTrue(output.contains(expected.get(name)), name + ": " + output);
      assertFalse(output.contains("Exception"), name + ": a message, not a stack trace: " + output);
      assertFalse(
          Files.exists(dir.resolve(name).resolve("fencekeeper.mv.db")),
          name + ": refused before the journal was opened");
    }
  }
}

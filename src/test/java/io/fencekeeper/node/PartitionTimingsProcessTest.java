package io.fencekeeper.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator who shortens the lease below what a partition takes to resolve gets a node that
 * refuses to start, saying which settings and by how much, before it binds or migrates anything.
 */
@ProcessTest
class PartitionTimingsProcessTest {

  @Test
  void aClusterNodeWhoseLeaseIsShorterThanThePartitionTakeoverRefusesToStart(@TempDir Path dir)
      throws Exception {
    Path out = dir.resolve("serve.out");
    Process serve =
        serve(
                Map.of(
                    "FENCEKEEPER_LEASE", "20s",
                    "FENCEKEEPER_SEED_NODES", "pekko://fencekeeper@127.0.0.1:25521",
                    // never reached: the node refuses before it opens its journal
                    "FENCEKEEPER_DB_URL", "jdbc:postgresql://127.0.0.1:1/fencekeeper",
                    "FENCEKEEPER_DATA_DIR", dir.resolve("data").toString()))
            .redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .start();
    assertTrue(serve.waitFor(120, TimeUnit.SECONDS), "it refuses, it does not hang");
    String output = Files.readString(out);
    assertEquals(78, serve.exitValue(), output); // EX_CONFIG
    assertTrue(
        output.contains(
            "fencekeeper node not started: fencekeeper.lease (20 s, FENCEKEEPER_LEASE) must be"
                + " longer than failure detection + split-brain decision + removal margin (26 s"),
        output);
    assertTrue(output.contains("split-brain-resolver.stable-after 10 s"), output);
    assertFalse(output.contains("at io.fencekeeper"), "a sentence, not a stack trace: " + output);
    assertFalse(Files.exists(dir.resolve("data")), "nothing was created");
  }

  private static ProcessBuilder serve(Map<String, String> env) {
    String classpath = System.getProperty("surefire.test.class.path");
    if (classpath == null || classpath.isBlank()) {
      classpath = System.getProperty("java.class.path");
    }
    ProcessBuilder builder =
        new ProcessBuilder(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-cp",
                classpath,
                "io.fencekeeper.cli.Main",
                "serve",
                "--config",
                Path.of("conf/cluster.conf").toAbsolutePath().toString()));
    builder.environment().putAll(env);
    return builder;
  }
}

package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.Console;
import io.fencekeeper.testing.FreePorts;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A {@code serve} node whose seed nodes never answer (none running, or a partition cuts it off)
 * gives up after {@code fencekeeper.join-timeout} with one line and exit 75, so that a supervisor
 * starts it again; before, it died with a bare {@code TimeoutException} stack trace and exit 1 (a
 * soak's partition of a restarting node). A join timeout that is not a positive duration stops the
 * start with exit 78, as every bad setting does.
 */
class ServeJoinTimeoutTest {

  @TempDir Path dir;

  @Test
  void aNodeWhoseSeedsNeverAnswerExits75WithOneLineAfterTheJoinTimeout() throws Exception {
    String seed = "pekko://fencekeeper@127.0.0.1:" + FreePorts.next();
    Console serve = serve(seed, "2s");

    assertEquals(75, serve.exit(), serve.err());
    assertTrue(
        serve
            .err()
            .contains(
                "fencekeeper node not started: not an Up cluster member 2 s after joining seed"
                    + " nodes "
                    + seed
                    + " (none answered, or a partition cuts this node off): exiting 75"),
        serve.err());
    assertFalse(serve.err().contains("\tat "), "no stack trace: " + serve.err());
  }

  @Test
  void aJoinTimeoutBelowOneSecondIsRefusedBeforeTheNodeStarts() throws Exception {
    Console serve = serve("pekko://fencekeeper@127.0.0.1:" + FreePorts.next(), "500ms");

    assertEquals(78, serve.exit(), serve.err());
    assertEquals(
        "fencekeeper node not started: fencekeeper.join-timeout (FENCEKEEPER_JOIN_TIMEOUT) must be"
            + " at least 1s, got 500ms",
        serve.err().strip());
  }

  private Console serve(String seed, String joinTimeout) throws Exception {
    Path conf = dir.resolve("node.conf");
    Files.writeString(
        conf,
        "fencekeeper.data-dir = \""
            + dir.resolve("data")
            + "\"\nfencekeeper.seed-nodes = \""
            + seed
            + "\"\nfencekeeper.join-timeout = \""
            + joinTimeout
            + "\"\nfencekeeper.http.port = "
            + FreePorts.next()
            + "\npekko.management.http.port = "
            + FreePorts.next()
            + "\npekko.remote.artery.canonical.port = 0\npekko.loglevel = OFF\n");
    return Console.capture(
        () -> new CommandLine(new ServeCommand()).execute("-c", conf.toString()));
  }
}

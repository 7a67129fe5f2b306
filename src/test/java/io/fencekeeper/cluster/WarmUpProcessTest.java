package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.ProviderTestSupport;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.FreePorts;
import io.fencekeeper.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code FENCEKEEPER_WARM_UP_ITEMS} on a {@code serve} process as an operator sets it: the node
 * warms up on a throwaway before it starts, and nothing of the warm-up reaches the node's journal
 * (PostgreSQL) or its provider (a sim in its own process); a SIGTERM during the warm-up ends the
 * process without starting the node; a value that cannot work is refused at start.
 */
@ProcessTest
class WarmUpProcessTest {

  private static final int WARM_UP_ITEMS = 300;

  @TempDir Path dir;

  @Test
  void theNodeStartsAfterItsWarmUpAndNothingOfItReachesItsJournalOrItsProvider() throws Exception {
    try (ProcessCluster cluster =
        ProcessCluster.ofNodes(
            1,
            4,
            Map.of(),
            n ->
                new ProcessCluster.Launch(
                    List.of(),
                    Map.of("FENCEKEEPER_WARM_UP_ITEMS", String.valueOf(WARM_UP_ITEMS))))) {
      ProcessCluster.NodeProcess node = cluster.nodes.get(0);
      String log = Files.readString(node.log());
      int warmed =
          log.indexOf(
              "fencekeeper warm-up: "
                  + WARM_UP_ITEMS
                  + " of "
                  + WARM_UP_ITEMS
                  + " items SUCCEEDED in ");
      int up = log.indexOf("fencekeeper node up: ");
      assertTrue(warmed >= 0, "the warm-up ran and said so: " + ProcessCluster.tail(node.log()));
      assertTrue(up > warmed, "the node started after its warm-up");

      // the provider the node calls saw no call of the warm-up's 300 items
      var stats = ProviderTestSupport.raw(cluster.simUrl, "GET", "/admin/stats", null);
      assertEquals(200, stats.statusCode());
      assertTrue(stats.body().contains("\"peakInFlight\":0"), stats.body());
      assertTrue(cluster.ledger().isEmpty(), "no effect at the provider");
      // the node's journal holds nothing of the warm-up: no event, no item, no run
      assertEquals(
          0L,
          ((Number)
                  cluster.queryOne(
                      "SELECT count(*) FROM event_journal WHERE persistence_id LIKE ?",
                      "%warm-up%"))
              .longValue());
      assertEquals(0L, ((Number) cluster.queryOne("SELECT count(*) FROM run_item")).longValue());
      assertEquals(0L, ((Number) cluster.queryOne("SELECT count(*) FROM run_record")).longValue());

      // and the warmed node works its first run like any node
      List<AccountCursor> accounts = accounts(120);
      RunView created = createRun(cluster.client, "after-warm-up", accounts);
      RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(180));
      assertEquals(RunState.SUCCEEDED, ended.state(), String.valueOf(ended));
      assertEquals(120, ended.counts().done());
      Map<String, Integer> effects = cluster.ledger();
      assertFalse(effects.isEmpty(), "the run's cleanups reached the provider");
      assertTrue(effects.size() <= 120, "keys of this run's items only: " + effects.size());
      effects.forEach((key, n) -> assertEquals(1, n, "one effect per key: " + key));
      Set<String> runKeys =
          accounts.stream()
              .map(
                  a ->
                      ItemId.of("after-warm-up", ClusterFixture.DATE, a.accountId(), a.cursor())
                          .idempotencyKey())
              .collect(Collectors.toSet());
      assertTrue(runKeys.containsAll(effects.keySet()), "every key is one of the run's items");
    }
  }

  @Test
  void sigtermDuringTheWarmUpEndsTheProcessAndABadValueIsRefused() throws Exception {
    // a warm-up that would take minutes, stopped once its synthetic run is in flight
    Process long_ = serve("long", "100000");
    Process negative = serve("negative", "-1");
    Process word = serve("word", "lots");
    try {
      stopAndRefuse(long_, negative, word);
    } finally {
      for (Process p : List.of(long_, negative, word)) {
        p.destroyForcibly();
      }
    }
  }

  private void stopAndRefuse(Process long_, Process negative, Process word) throws Exception {
    Path longLog = dir.resolve("long.log");
    ProcessCluster.awaitLineWithin(
        Duration.ofSeconds(180),
        longLog,
        Pattern.compile("(run warm-up/2000-01-01 created)"),
        long_);
    ProcessCluster.signal(long_, "TERM");
    assertTrue(long_.waitFor(90, TimeUnit.SECONDS), "ends after SIGTERM: " + tail(longLog));
    String output = Files.readString(longLog);
    assertFalse(output.contains("fencekeeper node up"), "the node never started: " + output);
    assertFalse(
        Files.exists(dir.resolve("long").resolve("fencekeeper.mv.db")),
        "the node's own journal was never opened");

    for (var refused : Map.of("negative", negative, "word", word).entrySet()) {
      Process process = refused.getValue();
      Path log = dir.resolve(refused.getKey() + ".log");
      assertTrue(process.waitFor(120, TimeUnit.SECONDS), refused.getKey() + " exits");
      String said = Files.readString(log);
      assertEquals(78, process.exitValue(), said);
      assertTrue(
          said.contains(
              "fencekeeper node not started: fencekeeper.warm-up.items"
                  + " (FENCEKEEPER_WARM_UP_ITEMS) must be between 0 and 1000000, got '"),
          said);
      assertFalse(said.contains("Exception"), "a message, not a stack trace: " + said);
      assertFalse(said.contains("warm-up: "), "refused before any warm-up: " + said);
    }
  }

  private Process serve(String name, String items) throws Exception {
    List<String> command = new ArrayList<>(ChildJvm.command());
    command.addAll(List.of("io.fencekeeper.cli.Main", "serve"));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().put("FENCEKEEPER_DATA_DIR", dir.resolve(name).toString());
    builder.environment().put("FENCEKEEPER_HTTP_PORT", String.valueOf(FreePorts.next()));
    builder.environment().put("FENCEKEEPER_MANAGEMENT_PORT", String.valueOf(FreePorts.next()));
    builder.environment().put("FENCEKEEPER_REMOTE_PORT", String.valueOf(FreePorts.next()));
    builder.environment().put("FENCEKEEPER_WARM_UP_ITEMS", items);
    builder.redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile());
    return builder.start();
  }

  private static String tail(Path log) {
    return ProcessCluster.tail(log);
  }
}

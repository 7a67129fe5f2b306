package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.assertOneEffectPerKey;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ProcessTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * SIGSTOP of a node holding leases, for longer than its leases plus the resolver's decision: the
 * others down it and take its items over. On SIGCONT it finds itself downed and stops; whatever its
 * workers were in the middle of is fenced off: one effect per key, no interleaved writers.
 */
@ProcessTest
class PausedNodeProcessTest {

  @Test
  void pausedNodeIsDownedStopsItselfOnResumeAndNoStaleCommitLands() throws Exception {
    try (ProcessCluster cluster =
        new ProcessCluster(4, "--latency-ms", "100", "--jitter-ms", "40", "--seed", "5")) {
      String job = "sigstop";
      List<AccountCursor> accounts = accounts(400);
      RunView created = createRun(cluster.client, job, accounts);
      awaitDone(
          cluster.client,
          created.runId(),
          100,
          Duration.ofSeconds(90),
          "a quarter of the run done");
      ProcessCluster.NodeProcess paused = cluster.nodes.get(2);
      ProcessCluster.signal(paused.process(), "STOP");

      long pausedAt = System.nanoTime();
      // paused past failure detection + stable-after + removal margin (7.5 s with the test
      // timings), then past its leases (10 s): the survivors removed it and workers elsewhere took
      // its items over. Typically 12-20 s; the waits are wide because a loaded machine stretches
      // every step, and a timeout shows the members and the node logs.
      Await.until(
          Duration.ofSeconds(90),
          "the paused node removed from the cluster",
          () -> !cluster.isMember(paused.address()),
          cluster::snapshot);
      double removedAfter = (System.nanoTime() - pausedAt) / 1e9;
      Await.until(
          Duration.ofSeconds(90),
          "an item of the paused node taken over",
          () -> view(cluster.client, created.runId()).map(r -> r.takeovers() > 0).orElse(false),
          () -> view(cluster.client, created.runId()) + "; " + cluster.snapshot());
      double takenOverAfter = (System.nanoTime() - pausedAt) / 1e9;
      ProcessCluster.signal(paused.process(), "CONT");
      assertTrue(
          paused.process().waitFor(60, TimeUnit.SECONDS),
          "the resumed node learns it was downed and stops: " + ProcessCluster.tail(paused.log()));

      RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(120));
      assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
      Map<Integer, Integer> histogram =
          assertOneEffectPerKey(cluster.client, job, accounts, cluster.ledger());
      assertEquals(Map.of(), cluster.interleavedWriters(), "A, B, A writers per persistence id");
      System.out.printf(
          "SIGSTOP/SIGCONT: removed after %.1f s, first takeover after %.1f s; resumed node exited"
              + " %d; run %s, stale rejections %d, takeovers %d, effects-per-key %s%n",
          removedAfter,
          takenOverAfter,
          paused.process().exitValue(),
          ended.state(),
          ended.staleRejections(),
          ended.takeovers(),
          histogram);
    }
  }
}

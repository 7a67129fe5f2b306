package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.assertOneEffectPerKey;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.leasesGranted;
import static io.fencekeeper.cluster.ClusterFixture.nodeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * kill -9 of a node process in the middle of a run: its leases are taken over once they expire, the
 * run completes, the sim process counts one effect per key, and no persistence id has two
 * interleaved writers. Prints the measured takeover time (kill → every lease it held claimed again)
 * with the settings used; docs/design.md, "Performance" asks for lease + 5 s.
 */
class NodeCrashProcessTest {

  @Test
  void killedNodeMidRunIsTakenOverAndEveryKeyTakesEffectOnce() throws Exception {
    try (ProcessCluster cluster =
        new ProcessCluster(4, "--latency-ms", "100", "--jitter-ms", "40", "--seed", "3")) {
      String job = "kill-9";
      List<AccountCursor> accounts = accounts(400);
      RunView created = createRun(cluster.client, job, accounts);
      awaitDone(
          cluster.client,
          created.runId(),
          100,
          Duration.ofSeconds(90),
          "a quarter of the run done");
      ProcessCluster.NodeProcess victim = cluster.nodes.get(2);
      Instant killedAt = Instant.now();
      victim.process().destroyForcibly(); // SIGKILL: no leave, no flush, no goodbye
      victim.process().waitFor();

      RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(120));
      assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
      Map<Integer, Integer> histogram =
          assertOneEffectPerKey(cluster.client, job, accounts, cluster.ledger());
      assertEquals(Map.of(), cluster.interleavedWriters(), "A, B, A writers per persistence id");

      List<WorkItem.LeaseGranted> takeovers =
          leasesGranted(cluster.client, job, accounts).stream()
              .filter(l -> l.previousOwner() != null)
              .filter(l -> nodeOf(l.previousOwner()).equals(victim.address()))
              .toList();
      assertTrue(!takeovers.isEmpty(), "the killed node held leases that were taken over");
      Instant lastTakeover =
          takeovers.stream().map(WorkItem.LeaseGranted::at).max(Instant::compareTo).orElseThrow();
      Duration takeover = Duration.between(killedAt, lastTakeover);
      System.out.printf(
          "TAKEOVER kill -9 -> all %d leases of the killed node claimed again: %.1f s"
              + " (lease %ds, offer grace 5s, acceptable-heartbeat-pause %s, stable-after %s,"
              + " down-removal-margin = stable-after); run %s, effects-per-key %s%n",
          takeovers.size(),
          takeover.toMillis() / 1000.0,
          ClusterFixture.LEASE.toSeconds(),
          ClusterFixture.testTimings()
              .get("pekko.cluster.failure-detector.acceptable-heartbeat-pause"),
          ClusterFixture.testTimings().get("pekko.cluster.split-brain-resolver.stable-after"),
          ended.state(),
          histogram);
      // docs/design.md, "Performance" targets lease + 5 s as a benchmark; this test only measures
      // it and guards
      // against a takeover that waits for something other than the lease (minutes, not seconds)
      assertTrue(takeover.compareTo(Duration.ofSeconds(60)) < 0, "takeover took " + takeover);
    }
  }
}

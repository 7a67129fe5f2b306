package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.nodeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fencekeeper.cli.NodeExit;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ProcessTest;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/**
 * Two faults at once, as Jepsen would combine them: the database goes away for every node (a {@link
 * io.fencekeeper.testing.DatabaseLink} resets every connection and every new one), and while it is
 * away node 3 is cut from the cluster ports of the others ({@link LoopbackPartition}). The split
 * brain resolver needs no database, so both sides decide while nothing can be written: the minority
 * downs itself and exits, the majority removes it. Then the database comes back, and the majority
 * takes over the minority's shards and the leases that ran out during the outage.
 *
 * <p>Asserted: nothing reached the journal from any node while the road to it was cut (the fault
 * was real); the run succeeds with one effect per key, no item lost or quarantined, counters equal
 * to the journal ({@link FaultOutcome}); no interleaved writers; no item committed by the minority
 * after a takeover; the minority exits as a downed node does. Printed: the outage and the
 * partition's timeline, the takeovers of the minority's leases from the database's return, and the
 * completion rate before the outage and after it.
 */
@ProcessTest
class PartitionDuringOutageProcessTest {

  private static final int MINORITY = 3;

  /** PartitionProcessTest's timings, for its reasons: a 4 s removal margin and a 12 s lease. */
  private static final Duration REMOVAL_MARGIN = Duration.ofSeconds(4);

  private static final Duration LEASE = Duration.ofSeconds(12);

  /** A write under way when the road is cut may still reach the database a moment later. */
  private static final Duration IN_FLIGHT_AT_CUT = Duration.ofSeconds(1);

  private static final Duration RATE_WINDOW = Duration.ofSeconds(10);

  @Test
  void aMinorityCutWhileTheDatabaseIsDownIsDownedAndTheRunSucceedsOnceItIsBack() throws Exception {
    boolean ci = "true".equals(System.getenv("CI"));
    assumeTrue(
        ci || LoopbackPartition.available(), "iptables and setpriv (as root) make the partition");
    LoopbackPartition.removeLeftovers();
    try (LoopbackPartition partition = new LoopbackPartition();
        ProcessCluster cluster =
            new ProcessCluster(
                4,
                Map.of(
                    "pekko.cluster.down-removal-margin",
                    REMOVAL_MARGIN.toMillis() + "ms",
                    "fencekeeper.lease",
                    LEASE.toMillis() + "ms"),
                ProcessCluster.Launch.forNode(
                    MINORITY,
                    new ProcessCluster.Launch(LoopbackPartition.minorityPrefix(), Map.of())),
                true,
                "--latency-ms",
                "100",
                "--jitter-ms",
                "40",
                "--seed",
                "36")) {
      String job = "partition-outage";
      // at 100 ms a call and 12 workers, 500 items outlast the outage (about 10 s) with most left
      List<AccountCursor> accounts = accounts(500);
      RunView created = createRun(cluster.client, job, accounts);
      awaitDone(cluster.client, created.runId(), 100, Duration.ofSeconds(90), "a fifth of the run");
      ProcessCluster.NodeProcess minority = cluster.nodes.get(MINORITY - 1);

      Instant outageAt = Instant.now();
      cluster.databaseLink.cut();
      partition.cut(
          minority.remotePort(),
          List.of(
              cluster.nodes.get(0).remotePort(),
              cluster.nodes.get(1).remotePort(),
              Cluster.get(cluster.client.system()).selfMember().address().getPort().orElseThrow()));
      Instant partitionAt = Instant.now();

      // both sides decide without the database: the minority stops itself, the majority removes it
      Instant[] exitedAndRemoved = new Instant[2];
      Await.until(
          Duration.ofSeconds(90),
          "node " + MINORITY + " stopped by itself and removed by the majority, database down",
          () -> {
            if (exitedAndRemoved[0] == null && !minority.process().isAlive()) {
              exitedAndRemoved[0] = Instant.now();
            }
            if (exitedAndRemoved[1] == null && !cluster.isMember(minority.address())) {
              exitedAndRemoved[1] = Instant.now();
            }
            return exitedAndRemoved[0] != null && exitedAndRemoved[1] != null;
          },
          cluster::snapshot);
      Instant mendedAt = Instant.now();
      cluster.databaseLink.mend();

      RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(240));
      FaultOutcome.JournalCounts counts =
          FaultOutcome.assertHeld(
              cluster, cluster.nodes.get(0), ended, RunState.SUCCEEDED, job, accounts);
      assertEquals(Map.of(), cluster.interleavedWriters(), "A, B, A writers per persistence id");
      assertEquals(
          NodeExit.DOWNED,
          minority.process().exitValue(),
          "the downed minority exited as downed: " + ProcessCluster.tail(minority.log()));

      JournalTimeline journal = JournalTimeline.read(cluster, job);
      List<JournalTimeline.Row> duringOutage =
          journal.rows().stream()
              .filter(r -> r.dbTime().isAfter(outageAt.plus(IN_FLIGHT_AT_CUT)))
              .filter(r -> r.dbTime().isBefore(mendedAt))
              .toList();
      assertEquals(List.of(), duringOutage, "rows written while the database was cut off");

      List<JournalTimeline.Row> takeovers =
          journal.all(WorkItem.LeaseGranted.class).stream()
              .filter(
                  r ->
                      r.event() instanceof WorkItem.LeaseGranted g
                          && g.previousOwner() != null
                          && nodeOf(g.previousOwner()).equals(minority.address()))
              .toList();
      List<JournalTimeline.Row> minorityCommits =
          journal.all(WorkItem.ItemCompleted.class).stream()
              .filter(r -> r.writer() != null)
              .filter(
                  r ->
                      journal
                          .grantOf(r.itemId(), ((WorkItem.ItemCompleted) r.event()).token())
                          .map(
                              g ->
                                  nodeOf(((WorkItem.LeaseGranted) g.event()).workerId())
                                      .equals(minority.address()))
                          .orElse(false))
              .toList();
      // a holder cut off never commits after its lease was taken over
      for (JournalTimeline.Row takeover : takeovers) {
        for (JournalTimeline.Row commit : minorityCommits) {
          if (commit.itemId().equals(takeover.itemId())) {
            assertTrue(
                commit.seq() < takeover.seq(),
                "item " + commit.itemId() + ": the minority committed after the takeover");
          }
        }
      }

      Optional<Instant> firstTakeover =
          takeovers.stream().map(JournalTimeline.Row::dbTime).min(Comparator.naturalOrder());
      Optional<Instant> lastTakeover =
          takeovers.stream().map(JournalTimeline.Row::dbTime).max(Comparator.naturalOrder());
      System.out.printf(
          "PARTITION DURING OUTAGE (lease %ds): database cut at +0 s, node %d cut from the cluster"
              + " +%.1f s; it exited +%s (exit %d), removed by the majority +%s; database back"
              + " +%.1f s; takeovers of its leases: %d, first +%s, last +%s (from the database's"
              + " return: first %s, last %s); completions %.1f/s in the %d s before the outage,"
              + " %.1f/s in the %d s after it; run %s in %.1f s; journal %s%n",
          LEASE.toSeconds(),
          MINORITY,
          seconds(outageAt, partitionAt),
          secondsText(outageAt, exitedAndRemoved[0]),
          minority.process().exitValue(),
          secondsText(outageAt, exitedAndRemoved[1]),
          seconds(outageAt, mendedAt),
          takeovers.size(),
          firstTakeover.map(t -> secondsText(outageAt, t)).orElse("none"),
          lastTakeover.map(t -> secondsText(outageAt, t)).orElse("none"),
          firstTakeover.map(t -> secondsText(mendedAt, t)).orElse("none"),
          lastTakeover.map(t -> secondsText(mendedAt, t)).orElse("none"),
          completionsPerSecond(journal, outageAt.minus(RATE_WINDOW), outageAt),
          RATE_WINDOW.toSeconds(),
          completionsPerSecond(journal, mendedAt, mendedAt.plus(RATE_WINDOW)),
          RATE_WINDOW.toSeconds(),
          ended.state(),
          seconds(ended.createdAt(), ended.endedAt()),
          counts.asCounters());
    }
  }

  /** Items completed per second, by the database's clock, in [from, to). */
  static double completionsPerSecond(JournalTimeline journal, Instant from, Instant to) {
    long completed =
        journal.all(WorkItem.ItemCompleted.class).stream()
            .filter(r -> !r.dbTime().isBefore(from) && r.dbTime().isBefore(to))
            .count();
    return completed / seconds(from, to);
  }

  private static double seconds(Instant from, Instant to) {
    return Duration.between(from, to).toMillis() / 1000.0;
  }

  private static String secondsText(Instant from, Instant to) {
    return String.format("%.1f s", seconds(from, to));
  }
}

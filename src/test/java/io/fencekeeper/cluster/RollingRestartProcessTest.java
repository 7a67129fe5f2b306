package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.assertOneEffectPerKey;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.nodeOf;
import static io.fencekeeper.cluster.ClusterFixture.view;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ProcessTest;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A rolling restart in the middle of a run, as an operator upgrades a cluster: SIGTERM each of the
 * three {@code serve} processes in turn, youngest first (coordinated shutdown: the node leaves,
 * hands its shards over, the singleton moves when it is the oldest), start it again, wait until it
 * is ready, then the next. The run succeeds, the sim counts one effect per key, no item has two
 * interleaved writers, and a node that leaves cleanly leaves no lease behind to be waited out and
 * taken over.
 *
 * <p>Measured and printed: for every item a leaving node held at its SIGTERM, how its lease ended
 * (its holder finished or released it, or it ran out and the next claim took it over) and when; and
 * the run's longest stretch without a completion.
 */
@ProcessTest
class RollingRestartProcessTest {

  /** An item leased by a node when it was told to stop, and how that lease ended. */
  record Interrupted(
      String itemId, String node, Instant sigterm, Instant leaseExpiry, JournalTimeline.Row end) {

    /** The lease ran out and someone else claimed: the item waited out the lease. */
    boolean takenOver() {
      return end.event() instanceof WorkItem.LeaseGranted g && g.previousOwner() != null;
    }

    /** From the SIGTERM until the item could move on: its holder's ending, or its lease's end. */
    Duration waited() {
      return Duration.between(sigterm, takenOver() ? leaseExpiry : end.dbTime());
    }

    Duration untilNextEvent() {
      return Duration.between(sigterm, end.dbTime());
    }
  }

  record Restart(ProcessCluster.NodeProcess node, Instant sigterm, Instant exited, Instant ready) {}

  @Test
  void rollingRestartMidRunLeavesNoLeaseToBeTakenOver() throws Exception {
    try (ProcessCluster cluster =
        new ProcessCluster(4, "--latency-ms", "150", "--jitter-ms", "60", "--seed", "7")) {
      String job = "rolling-restart";
      // at 150 ms a call, 2,000 items outlast three restarts even when each node takes half a
      // minute to come back on a loaded machine (the run must still be going at the third)
      List<AccountCursor> accounts = accounts(2000);
      RunView created = createRun(cluster.client, job, accounts);
      awaitDone(cluster.client, created.runId(), 100, Duration.ofSeconds(90), "the run under way");

      List<Restart> restarts = new ArrayList<>();
      // the youngest first, as scripts/local-cluster.sh stops them: two nodes leave while the
      // coordinator stays where it is, then the oldest hands the singleton over
      for (int i = 2; i >= 0; i--) {
        ProcessCluster.NodeProcess node = cluster.nodes.get(i);
        assertEquals(
            Optional.of(RunState.RUNNING),
            runState(cluster, created.runId()),
            "the run must still be running when node " + node.n() + " restarts: more items");
        Instant sigterm = Instant.now();
        // the same address comes back as a new incarnation: the old one must be gone first
        Instant exited = cluster.leave(node);
        ProcessCluster.NodeProcess fresh = cluster.restart(node);
        cluster.awaitReady(fresh);
        restarts.add(new Restart(node, sigterm, exited, Instant.now()));
      }
      // every node is back: what is left of the run proves only that it ends, so it need not be
      // slow (on a quiet machine most of it was left, 50 s at 150 ms)
      VerifyProcessTest.setSimLatency(cluster, 0);

      RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(240));
      assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
      Map<Integer, Integer> histogram =
          assertOneEffectPerKey(cluster.client, job, accounts, cluster.ledger());
      assertEquals(Map.of(), cluster.interleavedWriters(), "A, B, A writers per persistence id");

      JournalTimeline journal = JournalTimeline.read(cluster, job);
      List<Interrupted> interrupted = new ArrayList<>();
      for (Restart restart : restarts) {
        List<Interrupted> held = heldAtSigterm(journal, restart);
        interrupted.addAll(held);
        System.out.printf(
            "ROLLING node %d: SIGTERM -> exited %.1f s, ready again %.1f s; it held %d leases:"
                + " %d ended by their holder, %d ran out and were taken over; attempts it"
                + " abandoned while shutting down (\"ended without an answer\" in its log): %d%n",
            restart.node().n(),
            Duration.between(restart.sigterm(), restart.exited()).toMillis() / 1000.0,
            Duration.between(restart.sigterm(), restart.ready()).toMillis() / 1000.0,
            held.size(),
            held.stream().filter(h -> !h.takenOver()).count(),
            held.stream().filter(Interrupted::takenOver).count(),
            abandonedAttempts(restart.node()));
      }
      List<Interrupted> takenOver = interrupted.stream().filter(Interrupted::takenOver).toList();
      Interrupted longest =
          interrupted.stream().max(Comparator.comparing(Interrupted::waited)).orElse(null);
      Duration longestUntilNextClaim =
          takenOver.stream()
              .map(Interrupted::untilNextEvent)
              .max(Comparator.naturalOrder())
              .orElse(Duration.ZERO);
      JournalTimeline.Stretch quiet = journal.longestQuietStretch(WorkItem.ItemCompleted.class);
      System.out.printf(
          "ROLLING RESTART of 3 nodes mid-run (lease %ds): %d leases held at a SIGTERM, %d"
              + " taken over after running out; longest wait from a SIGTERM until the item could"
              + " move on %s; longest from a SIGTERM to the next claim of a lease that ran out"
              + " %.1f s; longest stretch without a completion %.1f s (from %s); run %s in %.1f s,"
              + " stale rejections %d, takeovers %d, effects-per-key %s%n",
          ClusterFixture.LEASE.toSeconds(),
          interrupted.size(),
          takenOver.size(),
          longest == null
              ? "n/a"
              : String.format(
                  "%.1f s (%s, %s)",
                  longest.waited().toMillis() / 1000.0,
                  longest.itemId(),
                  longest.takenOver() ? "its lease ran out" : "its holder ended it"),
          longestUntilNextClaim.toMillis() / 1000.0,
          quiet.length().toMillis() / 1000.0,
          quiet.from(),
          ended.state(),
          Duration.between(ended.createdAt(), ended.endedAt()).toMillis() / 1000.0,
          ended.staleRejections(),
          ended.takeovers(),
          histogram);

      // a clean leave finishes or hands back what it holds: no item waits out a lease for it,
      // and the run does not stall while nodes come and go
      assertAll(
          () ->
              assertEquals(
                  List.of(),
                  takenOver.stream()
                      .map(t -> t.itemId() + " (node " + t.node() + ", " + t.end().event() + ")")
                      .toList(),
                  "leases of a cleanly leaving node that ran out and were taken over"),
          () ->
              assertTrue(
                  quiet.length().compareTo(ClusterFixture.LEASE) < 0,
                  "no completion for " + quiet.length() + " from " + quiet.from()));
    }
  }

  private static Optional<RunState> runState(ProcessCluster cluster, String runId) {
    return Await.until(
        Duration.ofSeconds(30),
        "the run's view",
        () -> view(cluster.client, runId).map(RunView::state),
        Optional::isPresent);
  }

  /**
   * The items whose lease a node held when it was told to stop (granted to one of its workers
   * before the SIGTERM and not ended before it), each with the event after the SIGTERM that ended
   * that lease: the holder's own ending (same token), or the next claim.
   */
  private static List<Interrupted> heldAtSigterm(JournalTimeline journal, Restart restart) {
    String node = restart.node().address();
    List<Interrupted> held = new ArrayList<>();
    for (List<JournalTimeline.Row> rows : journal.byItem.values()) {
      WorkItem.LeaseGranted lease = null;
      Instant expiry = null;
      for (JournalTimeline.Row row : rows) {
        WorkItem.Event event = row.event();
        if (row.dbTime().isAfter(restart.sigterm())) {
          if (lease != null && endsLease(event)) {
            held.add(new Interrupted(row.itemId(), node, restart.sigterm(), expiry, row));
            break;
          }
          continue;
        }
        if (event instanceof WorkItem.LeaseGranted g) {
          lease = nodeOf(g.workerId()).equals(node) ? g : null;
          expiry = g.leaseExpiresAt();
        } else if (event instanceof WorkItem.LeaseRenewed r && lease != null) {
          expiry = r.leaseExpiresAt();
        } else if (endsLease(event)) {
          lease = null;
        }
      }
    }
    return held;
  }

  /** An event that ends a lease: an outcome, a release, a close, or the next claim. */
  private static boolean endsLease(WorkItem.Event event) {
    return event instanceof WorkItem.LeaseGranted
        || event instanceof WorkItem.ItemCompleted
        || event instanceof WorkItem.AttemptFailed
        || event instanceof WorkItem.LeaseReleased
        || event instanceof WorkItem.ItemClosed;
  }

  /** Attempts the node's workers gave up without an answer from the item (its log, WARN). */
  private static long abandonedAttempts(ProcessCluster.NodeProcess node) throws IOException {
    try (var lines = Files.lines(node.log())) {
      return lines.filter(line -> line.contains("ended without an answer")).count();
    }
  }
}

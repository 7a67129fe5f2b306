package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.view;
import static org.junit.jupiter.api.Assertions.fail;

import io.fencekeeper.run.RunView;
import io.fencekeeper.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Freezes a node (SIGSTOP) at a moment when its workers hold leases, so that a fault test has
 * leases to see taken over. A pool's attempts in flight are no such sign: under a throttled cap an
 * attempt may hold nothing yet, and between two batches a pool holds nothing at all (a stress-ng
 * run paused a node so and waited in vain for a takeover; a kill -9 once found a worker node
 * holding nothing). What the node holds is read from the journal once it is stopped, when it can no
 * longer start or end an attempt: an open lease there stays open until it is taken over.
 */
record StopWhileHolding(Instant stoppedAt, Map<String, String> held, int tries) {

  private static final int TRIES = 10;

  /**
   * Stops {@code node} and reads the journal of {@code job} twice; if both reads show leases of its
   * workers open, it stays stopped and those leases (held in both) are returned. Otherwise it is
   * let go on (SIGCONT) and stopped again once the run has made some progress, at most {@link
   * #TRIES} times. Each stop lasts two journal reads: below any failure detector of the tests.
   */
  static StopWhileHolding stop(
      ProcessCluster cluster, String job, String runId, ProcessCluster.NodeProcess node)
      throws Exception {
    return stop(cluster, List.of(job), runId, node);
  }

  /**
   * As {@link #stop(ProcessCluster, String, String, ProcessCluster.NodeProcess)}, holding leases of
   * every one of {@code jobs} (their names share the first one's as a prefix, so that each read is
   * one query); {@code runId} is the first job's run.
   */
  static StopWhileHolding stop(
      ProcessCluster cluster, List<String> jobs, String runId, ProcessCluster.NodeProcess node)
      throws Exception {
    String address = node.address();
    for (int tries = 1; ; tries++) {
      Instant stoppedAt = Instant.now();
      ProcessCluster.signal(node.process(), "STOP");
      Map<String, String> held =
          heldByPrefix(cluster, jobs.size() == 1 ? jobs.get(0) + "/" : jobs.get(0), address);
      if (jobs.stream()
          .allMatch(job -> held.keySet().stream().anyMatch(item -> item.startsWith(job + "/")))) {
        return new StopWhileHolding(stoppedAt, held, tries);
      }
      ProcessCluster.signal(node.process(), "CONT");
      if (tries == TRIES) {
        fail(
            "node "
                + node.n()
                + " held no lease of each of "
                + jobs
                + " at any of "
                + TRIES
                + " stops");
      }
      long done = view(cluster.client, runId).map(r -> r.counts().done()).orElse(0L);
      Await.until(
          Duration.ofSeconds(60),
          "more of the run done before stopping node " + node.n() + " again",
          () -> view(cluster.client, runId).map(RunView::counts).orElse(null),
          counts -> counts != null && counts.done() >= done + 5);
    }
  }

  /**
   * The leases of {@code job} that workers of the node at {@code address}, stopped by the caller,
   * hold: item → holder. A command the node sent just before the stop may still be on its way to an
   * item: the second read comes after the first one's query has ended, and a lease is counted only
   * when both show it open.
   */
  static Map<String, String> heldWhileStopped(ProcessCluster cluster, String job, String address)
      throws Exception {
    return heldByPrefix(cluster, job + "/", address);
  }

  /** As above, for the items whose ids start with {@code prefix}. */
  private static Map<String, String> heldByPrefix(
      ProcessCluster cluster, String prefix, String address) throws Exception {
    Map<String, String> first = JournalTimeline.readJobs(cluster, prefix).leasedBy(address);
    Map<String, String> held = new LinkedHashMap<>();
    if (!first.isEmpty()) {
      JournalTimeline.readJobs(cluster, prefix)
          .leasedBy(address)
          .forEach(
              (item, holder) -> {
                if (holder.equals(first.get(item))) {
                  held.put(item, holder);
                }
              });
    }
    return held;
  }
}

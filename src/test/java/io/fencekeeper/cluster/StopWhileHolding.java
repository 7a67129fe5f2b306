package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.view;
import static org.junit.jupiter.api.Assertions.fail;

import io.fencekeeper.run.RunView;
import io.fencekeeper.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
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
    String address = node.address();
    for (int tries = 1; ; tries++) {
      Instant stoppedAt = Instant.now();
      ProcessCluster.signal(node.process(), "STOP");
      Map<String, String> held = heldWhileStopped(cluster, job, address);
      if (!held.isEmpty()) {
        return new StopWhileHolding(stoppedAt, held, tries);
      }
      ProcessCluster.signal(node.process(), "CONT");
      if (tries == TRIES) {
        fail("node " + node.n() + " held no lease at any of " + TRIES + " stops");
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
    Map<String, String> first = JournalTimeline.read(cluster, job).leasedBy(address);
    Map<String, String> held = new LinkedHashMap<>();
    if (!first.isEmpty()) {
      JournalTimeline.read(cluster, job)
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

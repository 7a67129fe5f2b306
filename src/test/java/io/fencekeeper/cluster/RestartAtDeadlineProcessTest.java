package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.DATE;
import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.view;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.Counts;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ProcessTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/**
 * A rolling restart of all three {@code serve} processes while a run reaches its deadline. Each
 * node in turn, youngest first, is sent SIGTERM (coordinated shutdown: it drains its workers and
 * leaves), waited for until it is removed, started again on the same ports and waited for until it
 * is ready, as in {@link RollingRestartProcessTest}. The run cannot finish by its deadline, so
 * whichever node hosts the coordinator when the deadline passes stops it, closes what is open and
 * ends it PARTIAL (docs/design.md, "The run's final state": some items DONE, none failed, the rest
 * CLOSED), with the deadline as its reason, at its deadline and not long after, though nodes come
 * and go and the coordinator itself may be moving. What {@link FaultOutcome} asserts holds, no item
 * has interleaved writers, and no item takes an effect at the provider after the run ended, not
 * even once every lease granted for it has run out (a holder fenced off by the close believes its
 * lease until then).
 *
 * <p>Timings: the test cluster's. The deadline is 45 s after the run's creation, and the run cannot
 * be done by then: 1,500 items, each a plan and an apply at the sim's 250-300 ms (one call for the
 * tenth with nothing to do), on 12 workers, is at most about 25 items a second, 1,100 in 45 s, even
 * without a restart. The operator's pace is set from the deadline, which is fixed at the run's
 * creation: the restarts begin 25 s before it (once 10 items are DONE: a run that ends with none is
 * FAILED), nodes 3 and 2 back to back, and node 1, the oldest, which hosts the coordinator, is sent
 * its SIGTERM half a second before the deadline (at once if that has passed). A node took 6-9 s
 * from SIGTERM to ready again on a quiet machine, so node 1 drains and leaves as the deadline
 * passes and the singleton moves (a leaving node exited 0.8-2 s after its SIGTERM; at 1 s before,
 * node 1 was gone and the coordinator on node 3 when the deadline came). At load 9-50, with other
 * clusters beside it, a restart took 8-46 s, and the deadline passed while node 2 or 3 restarted:
 * the same scenario with another node down.
 *
 * <p>Printed: each node's restart times and the completion rate in the 5 s before its SIGTERM and
 * after it was ready again; where the deadline fell (which node's restart, which phase) and which
 * node hosted the coordinator then; the lag from the deadline to the run's end; the final counts.
 */
@ProcessTest
class RestartAtDeadlineProcessTest {

  private static final Duration DEADLINE_AFTER_CREATION = Duration.ofSeconds(45);
  private static final Duration RESTARTS_BEGIN_BEFORE_DEADLINE = Duration.ofSeconds(25);
  private static final Duration OLDEST_LEAVES_BEFORE_DEADLINE = Duration.ofMillis(500);
  private static final Duration RATE_WINDOW = Duration.ofSeconds(5);

  /** One node's restart: told to stop, its process exited, started again, ready again. */
  record Restart(
      ProcessCluster.NodeProcess node,
      Instant sigterm,
      Instant exited,
      Instant started,
      Instant ready) {

    /** What the node was doing at {@code t}, or empty if it was not restarting then. */
    Optional<String> phaseAt(Instant t) {
      if (t.isBefore(sigterm) || !t.isBefore(ready)) {
        return Optional.empty();
      }
      String phase =
          t.isBefore(exited)
              ? "leaving"
              : t.isBefore(started) ? "exited, not yet removed" : "starting";
      return Optional.of(
          String.format(
              "node %d's restart (%s, %.1f s after its SIGTERM)",
              node.n(), phase, seconds(sigterm, t)));
    }
  }

  @Test
  void aRollingRestartAtTheDeadlineEndsTheRunPartialAtItsDeadline() throws Exception {
    ScheduledExecutorService atDeadline = Executors.newSingleThreadScheduledExecutor();
    try (ProcessCluster cluster =
        new ProcessCluster(4, "--latency-ms", "250", "--jitter-ms", "50", "--seed", "36")) {
      String job = "restart-at-deadline";
      List<AccountCursor> accounts = accounts(1500);
      // whole seconds: the end reason names the deadline as the run record keeps it
      Instant deadline =
          Instant.now().plus(DEADLINE_AFTER_CREATION).truncatedTo(ChronoUnit.SECONDS);
      RunView created = create(cluster, job, accounts, deadline);
      ScheduledFuture<String> coordinatorAtDeadline =
          atDeadline.schedule(
              () -> coordinatorHost(cluster),
              Duration.between(Instant.now(), deadline).toMillis(),
              TimeUnit.MILLISECONDS);
      // some items DONE before the deadline: a run that ends with none is FAILED, not PARTIAL
      awaitDone(cluster.client, created.runId(), 10, Duration.ofSeconds(60), "the run under way");
      // the operator's pace is the scenario, not a wait for something to happen: the restarts
      // begin a set time before the deadline, and the coordinator's node leaves just before it
      awaitMoment(deadline.minus(RESTARTS_BEGIN_BEFORE_DEADLINE));
      assertTrue(Instant.now().isBefore(deadline), "the restarts begin before the deadline");
      assertEquals(
          RunState.RUNNING,
          Await.until(
                  Duration.ofSeconds(30),
                  "the run's view",
                  () -> view(cluster.client, created.runId()),
                  Optional::isPresent)
              .orElseThrow()
              .state(),
          "the run is running when the restarts begin");
      List<Restart> restarts = new ArrayList<>();
      restarts.add(restart(cluster, cluster.nodes.get(2)));
      restarts.add(restart(cluster, cluster.nodes.get(1)));
      awaitMoment(deadline.minus(OLDEST_LEAVES_BEFORE_DEADLINE));
      restarts.add(restart(cluster, cluster.nodes.get(0)));

      RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(120));
      Map<String, Integer> effectsAtEnd = cluster.ledger();
      // a holder fenced off by the close still believes its lease until it runs out: only then
      // can no call of it reach the provider any more (nor a late command of it be refused)
      JournalTimeline journal = JournalTimeline.read(cluster, job);
      Instant lastLeaseEnds = lastLeaseExpiry(journal);
      Await.until(
          Duration.ofSeconds(60),
          "every lease of the run's items run out by the database's clock (" + lastLeaseEnds + ")",
          () -> databaseNow(cluster).isAfter(lastLeaseEnds));
      Map<String, Integer> effectsAfterLeases = cluster.ledger();
      journal = JournalTimeline.read(cluster, job);

      Duration lag = Duration.between(deadline, ended.endedAt());
      Counts counts = ended.counts();
      print(restarts, journal, deadline);
      System.out.printf(
          "RESTART AT DEADLINE: deadline %s passed during %s; coordinator then on %s; run %s"
              + " %.1f s after its deadline (\"%s\"), %s; completions in the %d s before the"
              + " deadline %s; journal: %d claims, %d takeovers, %d stale rejections; keys"
              + " with an effect at the sim at the end %d, once every lease had run out (%s) %d%n",
          deadline,
          restarts.stream()
              .flatMap(r -> r.phaseAt(deadline).stream())
              .findFirst()
              .orElse("no restart"),
          coordinatorAtDeadline.get(10, TimeUnit.SECONDS),
          ended.state(),
          seconds(deadline, ended.endedAt()),
          ended.endReason(),
          counts,
          RATE_WINDOW.toSeconds(),
          rateUntilDeadline(journal, deadline.minus(RATE_WINDOW), deadline),
          journal.all(WorkItem.LeaseGranted.class).size(),
          journal.all(WorkItem.LeaseGranted.class).stream()
              .filter(row -> ((WorkItem.LeaseGranted) row.event()).previousOwner() != null)
              .count(),
          journal.all(WorkItem.StaleCommandRejected.class).size(),
          effectsAtEnd.size(),
          lastLeaseEnds,
          effectsAfterLeases.size());

      FaultOutcome.assertHeld(
          cluster, cluster.nodes.get(1), ended, RunState.PARTIAL, job, accounts);
      assertEquals(Map.of(), cluster.interleavedWriters(), "A, B, A writers per persistence id");
      Restart first = restarts.get(0);
      Restart last = restarts.get(restarts.size() - 1);
      assertAll(
          () ->
              assertTrue(
                  first.sigterm().isBefore(deadline) && deadline.isBefore(last.ready()),
                  "the deadline passes during the rolling restart: " + restarts),
          () -> assertEquals(deadline, ended.deadline(), "the run's deadline"),
          () ->
              assertEquals(
                  "deadline " + deadline + " passed", ended.endReason(), "why the run ended"),
          // loose: the coordinator stops the run within 250 ms, but its close sweep waits for
          // every page of 64 items, and an item whose shard is moving answers only to a second
          // ask, 3.3 s later: 3 s from the deadline to the end on a quiet machine, 10-23 s at
          // load 9-40 (71 s at load 52, where the resolver downed the coordinator's node mid-sweep
          // and the coordinator moved twice)
          () ->
              assertTrue(
                  !lag.isNegative() && lag.compareTo(Duration.ofSeconds(60)) < 0,
                  "the run ends at its deadline, not before nor long after: " + lag),
          () ->
              assertTrue(
                  counts.done() > 0
                      && counts.closed() > 0
                      && counts.done() + counts.closed() == counts.total(),
                  "some items DONE, every other one CLOSED: " + counts),
          () ->
              assertEquals(
                  effectsAtEnd,
                  effectsAfterLeases,
                  "no effect at the provider after the run ended, nor once its leases ran out"));
    } finally {
      atDeadline.shutdownNow();
    }
  }

  /** The run, with its deadline a known distance ahead ({@link ClusterFixture#createRun}'s 1 h). */
  private static RunView create(
      ProcessCluster cluster, String job, List<AccountCursor> accounts, Instant deadline)
      throws Exception {
    RunRequest request = new RunRequest(job, DATE, new Scope.Inline(accounts), deadline, 20, 0);
    return assertInstanceOf(
            RunCoordinator.Created.class,
            cluster.client.runs().create(request).toCompletableFuture().get(60, TimeUnit.SECONDS))
        .run();
  }

  /** Returns at {@code moment} (at once if it has passed). */
  private static void awaitMoment(Instant moment) {
    Await.until(
        DEADLINE_AFTER_CREATION, "the moment " + moment, () -> !Instant.now().isBefore(moment));
  }

  /** SIGTERM, exited, removed, started again on the same ports, ready. */
  private static Restart restart(ProcessCluster cluster, ProcessCluster.NodeProcess node)
      throws Exception {
    Instant sigterm = Instant.now();
    // the same address comes back as a new incarnation: the old one must be gone first
    Instant exited = cluster.leave(node);
    Instant started = Instant.now();
    cluster.awaitReady(cluster.restart(node));
    return new Restart(node, sigterm, exited, started, Instant.now());
  }

  /**
   * Where the coordinator singleton lives as the test's client member sees the cluster: on the
   * oldest member with the {@code worker} role ({@code conf/cluster.conf}), with its status.
   */
  private static String coordinatorHost(ProcessCluster cluster) {
    Member oldest = null;
    for (Member member : Cluster.get(cluster.client.system()).state().getMembers()) {
      if (member.hasRole("worker") && (oldest == null || member.isOlderThan(oldest))) {
        oldest = member;
      }
    }
    if (oldest == null) {
      return "no worker member";
    }
    String address = oldest.address().toString();
    return cluster.nodes.stream()
            .filter(n -> n.address().equals(address))
            .map(n -> "node " + n.n())
            .findFirst()
            .orElse(address)
        + " ("
        + oldest.status()
        + ")";
  }

  private static void print(List<Restart> restarts, JournalTimeline journal, Instant deadline) {
    for (Restart r : restarts) {
      System.out.printf(
          "RESTART AT DEADLINE node %d: SIGTERM -> exited %.1f s, removed %.1f s, ready again"
              + " %.1f s; completions in the %d s before its SIGTERM %s, after it was ready %s%n",
          r.node().n(),
          seconds(r.sigterm(), r.exited()),
          seconds(r.sigterm(), r.started()),
          seconds(r.sigterm(), r.ready()),
          RATE_WINDOW.toSeconds(),
          rateUntilDeadline(journal, r.sigterm().minus(RATE_WINDOW), deadline),
          rateUntilDeadline(journal, r.ready(), deadline));
    }
  }

  /**
   * Completions per second (by the database's clock) in the window from {@code from}, cut at the
   * deadline: past it nothing is handed out any more, so a rate there says nothing of a restart.
   */
  private static String rateUntilDeadline(JournalTimeline journal, Instant from, Instant deadline) {
    Instant to = from.plus(RATE_WINDOW);
    to = to.isAfter(deadline) ? deadline : to;
    if (Duration.between(from, to).compareTo(Duration.ofSeconds(1)) < 0) {
      return "n/a (the deadline)";
    }
    Instant end = to;
    long completed =
        journal.all(WorkItem.ItemCompleted.class).stream()
            .filter(row -> !row.dbTime().isBefore(from) && row.dbTime().isBefore(end))
            .count();
    return String.format("%.1f/s over %.1f s", completed / seconds(from, to), seconds(from, to));
  }

  /** The latest expiry any claim or renewal of the run's items ever gave a lease. */
  private static Instant lastLeaseExpiry(JournalTimeline journal) {
    Instant last = Instant.EPOCH;
    for (JournalTimeline.Row row : journal.rows()) {
      Instant expiry =
          row.event() instanceof WorkItem.LeaseGranted g
              ? g.leaseExpiresAt()
              : row.event() instanceof WorkItem.LeaseRenewed r ? r.leaseExpiresAt() : last;
      last = expiry.isAfter(last) ? expiry : last;
    }
    return last;
  }

  private static Instant databaseNow(ProcessCluster cluster) {
    try (Connection c =
            DriverManager.getConnection(
                cluster.db.url(), cluster.db.user(), cluster.db.password());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT clock_timestamp()")) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    } catch (java.sql.SQLException e) {
      return Instant.EPOCH; // asked again at the next poll
    }
  }

  private static double seconds(Instant from, Instant to) {
    return Duration.between(from, to).toMillis() / 1000.0;
  }
}

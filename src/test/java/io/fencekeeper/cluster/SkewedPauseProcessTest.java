package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.view;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ProcessTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * A node paused (SIGSTOP) past its leases while its clock is 90 s ahead (libfaketime, as {@link
 * ClockSkewProcessTest} starts it), woken (SIGCONT) once others have taken its leases over. Three
 * {@code serve} processes: node 1 hosts every item's entity and works none; nodes 2 and 3 work and
 * host none ({@code FENCEKEEPER_HOST_SHARDS}, {@link
 * ProcessCluster.Launch#shardNodesThenWorkerNodes} with one shard node); node 3 is the skewed one
 * (not the oldest: the coordinator's clock ends runs). The placement is what makes the fault bite:
 * every lease node 3 holds is granted and judged by an entity on node 1, awake and on the machine's
 * clock, the database's; so while node 3 sleeps its leases run out and node 2 takes them over, and
 * node 3 wakes a member, mid-attempt, with tokens that are no longer current. (Were node 3 hosting
 * items, their entities would sleep with it: nothing of theirs would be taken over, and on waking
 * one clock, its own, would judge both the lease and its holder.) Node 3's clock decides nothing
 * about a lease: it measures its own lease as a duration (docs/cluster.md, "Whose clock decides a
 * lease"), and the one instant it still hands out, the retry time of an item it gives back, can
 * only delay that item.
 *
 * <p>Asserted, at the default quarantine setting: the run SUCCEEDS with all {@link FaultOutcome}
 * holds (the counters read from the woken node), no interleaved writers, every lease node 3 held
 * taken over and nothing of its holders landing after that, stale commands refused, node 3 woke a
 * member; and the premise: node 3's clock ran 90 s ahead (its HTTP answers' Date) while no journal
 * row was written on a clock ahead. Printed: for each lease node 3 held, when it ended and when it
 * was taken over, from the SIGSTOP; the woken holders' commands refused; completion rates.
 */
@ProcessTest
class SkewedPauseProcessTest {

  private static final int SKEWED = 3;

  /**
   * A failure detector far slower than the pause, so that node 3 wakes a member and its holders are
   * found alive when their leases are taken over. The pause lasts a lease (5 s, not the test
   * cluster's 10: the pause need only outlast it), then the offer's grace (5 s) until node 1's
   * dispatcher asks the item and hands it out again, then node 2's claim: about 11 s, which a
   * loaded machine stretches; 40 s of acceptable heartbeat pause keeps it well below detection.
   * Detection far beyond the lease breaks the partition inequality on purpose, which a node refuses
   * unless told that this is meant.
   */
  private static final Map<String, Object> PATIENT_DETECTOR =
      Map.of(
          "pekko.cluster.failure-detector.acceptable-heartbeat-pause", "40s",
          "fencekeeper.lease", "5s",
          "pekko.cluster.split-brain-resolver.stable-after", "4s",
          "pekko.cluster.split-brain-resolver.down-all-when-unstable", "off",
          "fencekeeper.unsafe-partition-timings", true);

  /** Completions after the wake at the sim's latency: the window the rate after it is taken in. */
  private static final int AFTER_WAKE = 20;

  /**
   * A lease node 3 held at its stop, by the database's clock: its end (node 1 granted it on the
   * machine's clock) and the takeover's {@code db_time}; the holder's commands under it refused as
   * stale tokens, and its events that landed after the takeover (none may).
   */
  record HeldLease(
      String itemId,
      Instant ended,
      Instant takenOver,
      boolean holderFoundAlive,
      long refusedByToken,
      List<String> landedAfterTakeover) {
    String from(Instant stop) {
      return String.format(
          "end %+.1f s, taken %+.1f s%s",
          NodeCrashProcessTest.seconds(stop, ended),
          NodeCrashProcessTest.seconds(stop, takenOver),
          holderFoundAlive ? "" : " (holder lost)");
    }
  }

  @Test
  void aWorkerNinetySecondsAheadPausedPastItsLeasesIsFencedOffOnWakingAndTheRunSucceeds()
      throws Exception {
    boolean ci = "true".equals(System.getenv("CI"));
    assumeTrue(
        ci || Files.exists(ClockSkewProcessTest.LIBFAKETIME),
        "Debian's faketime (libfaketime) is installed");
    // 400 ms calls, two per item (plan, apply): at the stop node 3's workers are most likely inside
    // a provider call, whose answer or timeout on waking leads to a command with the old token,
    // rather than in an ask to their item, which gives up on waking without a word
    // (CountersMatchJournalProcessTest). 300 items: 40 before the stop, 4 workers' worth through
    // the pause (4/s for 11-20 s), 20 after the wake; the rest, at no latency, only has to end.
    try (ProcessCluster cluster =
        new ProcessCluster(
            4,
            PATIENT_DETECTOR,
            placement(),
            "--latency-ms",
            "400",
            "--jitter-ms",
            "100",
            "--seed",
            "36")) {
      ProcessCluster.NodeProcess skewed = cluster.nodes.get(SKEWED - 1);
      Duration ahead = clockAhead(skewed);
      String job = "skewed-pause";
      List<AccountCursor> accounts = accounts(300);
      String runId = createRun(cluster.client, job, accounts).runId();
      awaitDone(cluster.client, runId, 40, Duration.ofSeconds(90), "the run under way");

      StopWhileHolding stop = StopWhileHolding.stop(cluster, job, runId, skewed);
      Await.until(
          Duration.ofSeconds(90),
          "every lease node 3 held at its stop taken over " + stop.held(),
          () -> stillHeld(cluster, stop.held()),
          List::isEmpty);
      Instant woke = Instant.now();
      ProcessCluster.signal(skewed.process(), "CONT");
      assertTrue(
          cluster.isMember(skewed.address()),
          "the pause stayed below failure detection: node 3 woke as a member");
      RunView atWake =
          Await.until(
                  Duration.ofSeconds(30),
                  "the run's view",
                  () -> view(cluster.client, runId),
                  Optional::isPresent)
              .get();
      assertEquals(RunState.RUNNING, atWake.state(), "still going when node 3 wakes: more items");
      Await.until(
          Duration.ofSeconds(90),
          AFTER_WAKE + " items more done after the wake",
          () -> view(cluster.client, runId).orElse(null),
          r -> r != null && r.counts().done() >= atWake.counts().done() + AFTER_WAKE);
      Instant fast = Instant.now();
      VerifyProcessTest.setSimLatency(cluster, 0);

      RunView ended = awaitEnded(cluster.client, runId, Duration.ofSeconds(240));
      FaultOutcome.JournalCounts counts =
          FaultOutcome.assertHeld(cluster, skewed, ended, RunState.SUCCEEDED, job, accounts);
      assertEquals(Map.of(), cluster.interleavedWriters(), "A, B, A writers per persistence id");

      JournalTimeline journal = JournalTimeline.read(cluster, job);
      List<HeldLease> held = new ArrayList<>();
      stop.held().forEach((item, holder) -> held.add(heldLease(journal, item, holder)));
      Map<String, Duration> aheadByWriter = ClockSkewProcessTest.medianClockAheadByWriter(journal);
      System.out.printf(
          "SKEWED PAUSE node 3 (clock %+.1f s by its Date header; lease 5 s, acceptable heartbeat"
              + " pause 40 s): stopped holding %d leases (stop %d), woke after %.1f s a member;"
              + " each held lease from the SIGSTOP: %s; the woken holders' commands refused by"
              + " token %d; node 3's refused in all %d; completions/s 5 s before the stop %.1f,"
              + " during the pause %.1f, after waking %.1f (%.1f s at the sim's latency); run %s in"
              + " %.1f s, ended %.1f s after the wake; journal %s%n",
          ahead.toMillis() / 1000.0,
          held.size(),
          stop.tries(),
          NodeCrashProcessTest.seconds(stop.stoppedAt(), woke),
          held.stream().map(h -> h.itemId() + ": " + h.from(stop.stoppedAt())).toList(),
          held.stream().mapToLong(HeldLease::refusedByToken).sum(),
          counts.staleFrom(skewed.address()),
          completionRate(journal, stop.stoppedAt().minusSeconds(5), stop.stoppedAt()),
          completionRate(journal, stop.stoppedAt(), woke),
          completionRate(journal, woke, fast),
          NodeCrashProcessTest.seconds(woke, fast),
          ended.state(),
          NodeCrashProcessTest.seconds(ended.createdAt(), ended.endedAt()),
          // an item parked until a retry time of the woken node's clock would hold the end 90 s
          NodeCrashProcessTest.seconds(woke, ended.endedAt()),
          counts);

      assertAll(
          () ->
              assertEquals(
                  List.of(),
                  held.stream()
                      .filter(h -> h.takenOver() == null || !h.landedAfterTakeover().isEmpty())
                      .toList(),
                  "leases of node 3 not taken over, or its holders' events after the takeover"),
          // whose refusals they are is luck (CountersMatchJournalProcessTest); that some are is not
          () -> assertTrue(counts.staleRejections() > 0, "stale commands refused: " + counts),
          () -> assertTrue(cluster.isMember(skewed.address()), "node 3 is still a member"),
          () ->
              assertTrue(
                  ahead.minus(ClockSkewProcessTest.SKEW).abs().compareTo(Duration.ofSeconds(5)) < 0,
                  "faketime put node 3's clock " + ClockSkewProcessTest.SKEW + " ahead: " + ahead),
          () ->
              assertTrue(
                  aheadByWriter.values().stream().noneMatch(ClockSkewProcessTest::isSkewed),
                  "no lease was granted or judged on node 3's clock: " + aheadByWriter));
    }
  }

  /** Node 1 hosts the items and works none; nodes 2 and 3 work and host none; 3 runs ahead. */
  private static IntFunction<ProcessCluster.Launch> placement() {
    Map<String, String> skewedWorker = new HashMap<>(ClockSkewProcessTest.FAKE_TIME);
    skewedWorker.put("FENCEKEEPER_HOST_SHARDS", "off");
    return n ->
        switch (n) {
          case 1 ->
              new ProcessCluster.Launch(
                  List.of(), Map.of("FENCEKEEPER_WORKERS", "0", "FENCEKEEPER_HOST_SHARDS", "on"));
          case SKEWED -> new ProcessCluster.Launch(List.of(), skewedWorker);
          default -> new ProcessCluster.Launch(List.of(), Map.of("FENCEKEEPER_HOST_SHARDS", "off"));
        };
  }

  /**
   * How far the node's clock is ahead of this JVM's: the Date of its management server's answer
   * (whole seconds), against the moment the answer came.
   */
  private static Duration clockAhead(ProcessCluster.NodeProcess node) throws Exception {
    HttpResponse<Void> answer =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + node.managementPort() + "/health/ready"))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.discarding());
    Instant now = Instant.now();
    String date = answer.headers().firstValue("date").orElseThrow();
    return Duration.between(
        now, ZonedDateTime.parse(date, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
  }

  /** The items whose lease their holder at the stop still has, or that do not answer now. */
  private static List<String> stillHeld(ProcessCluster cluster, Map<String, String> held) {
    List<ItemId> ids = held.keySet().stream().map(ItemId::parse).toList();
    Map<ItemId, ItemView> seen = PauseThenKillProcessTest.look(cluster, ids);
    return ids.stream()
        .filter(
            id -> {
              ItemView item = seen.get(id);
              return item == null
                  || item.status() == WorkItem.Status.LEASED
                      && item.owner().equals(held.get(id.value()));
            })
        .map(ItemId::value)
        .toList();
  }

  /**
   * The lease {@code holder} held on {@code itemId} at the stop, read from the item's journal up to
   * its takeover (the claim that names the holder as previous owner) and on from there.
   */
  private static HeldLease heldLease(JournalTimeline journal, String itemId, String holder) {
    long token = -1;
    Instant ended = null;
    Instant takenOver = null;
    boolean foundAlive = false;
    long refusedByToken = 0;
    List<String> landed = new ArrayList<>();
    for (JournalTimeline.Row row : journal.byItem.get(itemId)) {
      WorkItem.Event event = row.event();
      if (takenOver == null) {
        if (event instanceof WorkItem.LeaseGranted g && holder.equals(g.previousOwner())) {
          takenOver = row.dbTime();
        } else if (event instanceof WorkItem.LeaseGranted g && holder.equals(g.workerId())) {
          token = g.token();
          ended = g.leaseExpiresAt();
        } else if (event instanceof WorkItem.LeaseRenewed r && r.token() == token) {
          ended = r.leaseExpiresAt();
        } else if (event instanceof WorkItem.HolderNodeAlive a && holder.equals(a.workerId())) {
          foundAlive = true;
        }
      } else if (event instanceof WorkItem.StaleCommandRejected s) {
        refusedByToken += s.presentedToken() == token && s.currentToken() > token ? 1 : 0;
      } else if (carries(event, token)) {
        landed.add(event.toString());
      }
    }
    return new HeldLease(itemId, ended, takenOver, foundAlive, refusedByToken, landed);
  }

  /** Whether {@code event} is a holder's step under {@code token}. */
  private static boolean carries(WorkItem.Event event, long token) {
    return event instanceof WorkItem.LeaseRenewed e && e.token() == token
        || event instanceof WorkItem.EffectRecorded r && r.token() == token
        || event instanceof WorkItem.MarkedAmbiguous m && m.token() == token
        || event instanceof WorkItem.ItemCompleted c && c.token() == token
        || event instanceof WorkItem.AttemptFailed f && f.token() == token
        || event instanceof WorkItem.LeaseReleased l && l.token() == token;
  }

  /** Items completed per second in [from, to), by the database's clock. */
  private static double completionRate(JournalTimeline journal, Instant from, Instant to) {
    long done =
        journal.all(WorkItem.ItemCompleted.class).stream()
            .filter(r -> !r.dbTime().isBefore(from) && r.dbTime().isBefore(to))
            .count();
    return done / (Duration.between(from, to).toMillis() / 1000.0);
  }
}

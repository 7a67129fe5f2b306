package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.item;
import static io.fencekeeper.cluster.ClusterFixture.nodeOf;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One of three nodes with its clock 90 s ahead: libfaketime preloaded into its JVM, as {@code
 * faketime -f +90s java ...} does. It offsets the monotonic clock too, which changes nothing the
 * JVM sees (only differences of it count), while {@code FAKETIME_DONT_FAKE_MONOTONIC} would make
 * every clock read of the JVM slow enough (measured: start-up 0.5 s to 10 s) to starve the node of
 * heartbeats. Mid-run another node restarts, so shards move onto the skewed node and back: the case
 * docs/cluster.md, "Whose clock decides a lease" describes.
 *
 * <p>Asserted, safety first: at most one effect per key (exactly one for a DONE item that needed
 * one) and no interleaved writers; the journal shows the skewed node's clock 90 s ahead (faketime
 * took effect); measured against the database's clock, no lease ended early by more than the
 * documented bound: never while the same clock granted and judged it, and by at most what was left
 * of it (at most the skew) when its shard moved to a host whose clock is ahead. Then liveness: the
 * run succeeds within 240 s. Printed: how many leases ended early and by how much, how many the
 * skewed node's own workers handed back unused, the run's duration, and, when it did not finish,
 * the journal of every unfinished item and the cluster view.
 */
@ProcessTest
class ClockSkewProcessTest {

  static final Duration SKEW = Duration.ofSeconds(90);
  static final Path LIBFAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");
  private static final int SKEWED = 3;

  /**
   * A node's environment for a clock {@link #SKEW} ahead: {@code faketime -f +90s java ...}, the
   * monotonic clock offset too (above). With {@code FAKETIME_DONT_FAKE_MONOTONIC=1}, which this
   * test once set against its own word, a JVM that started and read a million pairs of {@code
   * System.nanoTime()} and {@code currentTimeMillis()} used 1.2 s of CPU instead of 0.22 s (and
   * took 4.5-8 s instead of 1-1.3 s, at load 40-60); timed waits (sleep, park, wait, poll, a
   * scheduled task) last as long either way.
   */
  static final Map<String, String> FAKE_TIME =
      Map.of("LD_PRELOAD", LIBFAKETIME.toString(), "FAKETIME", "+" + SKEW.toSeconds() + "s");

  /** The database stamps a row after the entity took its time; a row is never stamped before. */
  private static final Duration TOLERANCE = Duration.ofMillis(50);

  /**
   * This test is about clocks, not crashes: no node is meant to be downed here, and on a two-core
   * machine shared with other test runs (load 20-35) the skewed node missed heartbeats for 1.2 s
   * (the test timings), 3.7 s and over 10 s while it started, and was downed. Detection and the
   * resolver's decision are relaxed far beyond that; leases stay 5 s, so a lease still ends by its
   * clock (timings a node refuses unless told that this is meant).
   */
  static final Map<String, Object> RELAXED_FAILURE_DETECTION =
      Map.of(
          "pekko.cluster.failure-detector.acceptable-heartbeat-pause", "30s",
          "fencekeeper.lease", "5s",
          "pekko.cluster.split-brain-resolver.stable-after", "20s",
          "pekko.cluster.split-brain-resolver.down-all-when-unstable", "off",
          "fencekeeper.unsafe-partition-timings", true);

  /** A lease as its host meant it, and the moment some host treated it as over. */
  record EarlyEnd(
      String itemId,
      boolean grantedBySkewed,
      boolean judgedBySkewed,
      Instant meantToEnd,
      Instant treatedAsOver,
      String how) {
    Duration early() {
      return Duration.between(treatedAsOver, meantToEnd);
    }
  }

  @Test
  void nodeWithItsClockNinetySecondsAheadCostsTakeoversNeverADuplicateEffect() throws Exception {
    boolean ci = "true".equals(System.getenv("CI"));
    assumeTrue(ci || Files.exists(LIBFAKETIME), "Debian's faketime (libfaketime) is installed");
    try (ProcessCluster cluster =
        new ProcessCluster(
            4,
            RELAXED_FAILURE_DETECTION,
            ProcessCluster.Launch.forNode(SKEWED, new ProcessCluster.Launch(List.of(), FAKE_TIME)),
            "--latency-ms",
            "100",
            "--jitter-ms",
            "40",
            "--seed",
            "13")) {
      String job = "clock-skew";
      List<AccountCursor> accounts = accounts(600);
      RunView created = createRun(cluster.client, job, accounts);
      awaitDone(
          cluster.client, created.runId(), 150, Duration.ofSeconds(90), "a quarter of the run");

      // node 2 restarts: its shards move to nodes 1 and 3 (the skewed one), then some come back
      ProcessCluster.NodeProcess restarted = cluster.nodes.get(1);
      restarted.process().destroy();
      assertTrue(restarted.process().waitFor(90, TimeUnit.SECONDS), "node 2 leaves");
      Await.until(
          Duration.ofSeconds(60), "node 2 removed", () -> !cluster.isMember(restarted.address()));
      cluster.awaitReady(cluster.restart(restarted));

      // the run gets its time; whether it finished is asserted last, after what safety asks
      Optional<RunView> ended = endedWithin(cluster, created.runId(), Duration.ofSeconds(240));
      RunView last = ended.orElseGet(() -> view(cluster.client, created.runId()).orElseThrow());
      Map<String, Integer> ledger = cluster.ledger();
      Map<Integer, Integer> histogram = new TreeMap<>();
      List<String> wrongEffects = new ArrayList<>();
      Map<ItemId, ItemView> views =
          ClusterFixture.views(cluster.client, ClusterFixture.itemIds(job, accounts));
      for (Map.Entry<ItemId, ItemView> entry : views.entrySet()) {
        ItemId id = entry.getKey();
        ItemView item = entry.getValue();
        int effects = ledger.getOrDefault(id.idempotencyKey(), 0);
        histogram.merge(effects, 1, Integer::sum);
        boolean nothingToDo =
            item.status() == WorkItem.Status.DONE
                && item.effectOutcome().kind() == WorkItem.OutcomeKind.NOTHING_TO_DO;
        if (effects > 1
            || (item.status() == WorkItem.Status.DONE && effects != (nothingToDo ? 0 : 1))) {
          wrongEffects.add(id + ": " + item.status() + " with " + effects + " effects");
        }
      }
      Map<String, List<String>> interleaved = cluster.interleavedWriters();

      JournalTimeline journal = JournalTimeline.read(cluster, job);
      Map<String, Duration> aheadByWriter = medianClockAheadByWriter(journal);
      List<Duration> skewedWriters =
          aheadByWriter.values().stream().filter(ahead -> isSkewed(ahead)).toList();
      List<EarlyEnd> ends = leaseEnds(journal, aheadByWriter);
      List<EarlyEnd> early = ends.stream().filter(e -> e.early().compareTo(TOLERANCE) > 0).toList();
      EarlyEnd earliest = ends.stream().max(Comparator.comparing(EarlyEnd::early)).orElse(null);
      String skewedNode = cluster.nodes.get(SKEWED - 1).address();
      long handedBackBySkewedWorkers =
          journal.all(WorkItem.LeaseReleased.class).stream()
              .filter(
                  r ->
                      journal
                          .grantOf(r.itemId(), ((WorkItem.LeaseReleased) r.event()).token())
                          .map(g -> nodeOf(((WorkItem.LeaseGranted) g.event()).workerId()))
                          .map(skewedNode::equals)
                          .orElse(false))
              .count();
      if (ended.isEmpty()) {
        printUnfinished(journal);
        System.out.println("CLOCK SKEW cluster view: " + clusterView(cluster.nodes.get(0)));
      }
      System.out.printf(
          "CLOCK SKEW node %d +%ds (lease %ds): %d of %d entity incarnations wrote with a clock"
              + " ahead by %s (median); %d lease ends judged, %d ended early (%d when the judging"
              + " host's clock was ahead of the granting host's), the earliest by %s; leases the"
              + " skewed node's own workers handed back unused: %d; run %s after %.1f s (%d of %d"
              + " done), stale rejections %d, takeovers %d, effects-per-key %s%n",
          SKEWED,
          SKEW.toSeconds(),
          ClusterFixture.LEASE.toSeconds(),
          skewedWriters.size(),
          aheadByWriter.size(),
          skewedWriters.stream().sorted().skip(skewedWriters.size() / 2).findFirst().orElse(null),
          ends.size(),
          early.size(),
          early.stream().filter(e -> !e.grantedBySkewed() && e.judgedBySkewed()).count(),
          earliest == null
              ? "n/a"
              : String.format(
                  "%.2f s (%s, %s)",
                  earliest.early().toMillis() / 1000.0, earliest.itemId(), earliest.how()),
          handedBackBySkewedWorkers,
          last.state(),
          Duration.between(
                      last.createdAt(), last.endedAt() != null ? last.endedAt() : Instant.now())
                  .toMillis()
              / 1000.0,
          last.counts().done(),
          last.counts().total(),
          last.staleRejections(),
          last.takeovers(),
          histogram);

      assertAll(
          // safety first: one effect per key, one writer at a time
          () -> assertEquals(List.of(), wrongEffects, "effects at the provider"),
          () -> assertEquals(Map.of(), interleaved, "A, B, A writers per persistence id"),
          () ->
              // a row's database time comes after its writer's time by the write's latency,
              // which a loaded machine stretches to seconds: the median tells the skew, and no
              // row is far off it
              assertTrue(
                  !skewedWriters.isEmpty()
                      && median(skewedWriters).compareTo(SKEW.minusSeconds(1)) > 0
                      && median(skewedWriters).compareTo(SKEW.plusSeconds(1)) < 0
                      && skewedWriters.stream()
                          .allMatch(
                              ahead ->
                                  ahead.compareTo(SKEW.minusSeconds(10)) > 0
                                      && ahead.compareTo(SKEW.plusSeconds(3)) < 0),
                  "faketime moved the skewed node's clock by " + SKEW + ": " + skewedWriters),
          () -> assertTrue(!skewedWriters.isEmpty(), "the skewed node hosted items"),
          // docs/cluster.md, "Whose clock decides a lease": one clock never ends a lease early
          () ->
              assertEquals(
                  List.of(),
                  early.stream()
                      .filter(e -> e.grantedBySkewed() == e.judgedBySkewed())
                      .map(EarlyEnd::toString)
                      .toList(),
                  "leases ended early by the clock that granted them"),
          // ... and a moved shard ends one early by at most what was left of it, at most the skew
          () ->
              assertEquals(
                  List.of(),
                  early.stream()
                      .filter(
                          e ->
                              e.early().compareTo(ClusterFixture.LEASE.plus(TOLERANCE)) > 0
                                  || e.early().compareTo(SKEW.plus(TOLERANCE)) > 0)
                      .map(EarlyEnd::toString)
                      .toList(),
                  "leases ended early by more than the lease or the skew"),
          // then liveness: the run finishes although one node's clock is off
          () ->
              assertEquals(
                  RunState.SUCCEEDED,
                  last.state(),
                  "the run within 240 s (unfinished items and the cluster view are printed): "
                      + last));
    }
  }

  private static Optional<RunView> endedWithin(
      ProcessCluster cluster, String runId, Duration timeout) {
    try {
      return Optional.of(awaitEnded(cluster.client, runId, timeout));
    } catch (AssertionError stillRunning) {
      return Optional.empty();
    }
  }

  /** The journal of every item that is not DONE, with each row's clock against the database's. */
  private static void printUnfinished(JournalTimeline journal) {
    journal.byItem.forEach(
        (itemId, rows) -> {
          if (rows.stream().noneMatch(r -> r.event() instanceof WorkItem.ItemCompleted)) {
            System.out.println("CLOCK SKEW unfinished " + itemId);
            for (JournalTimeline.Row row : rows) {
              System.out.printf(
                  "  #%d db %s ahead %.1f s writer %s %s%n",
                  row.seq(),
                  row.dbTime(),
                  row.clockAhead().toMillis() / 1000.0,
                  row.writer().substring(0, 8),
                  row.event());
            }
          }
        });
  }

  /** GET /api/cluster: members, shards and each node's worker pool use. */
  private static String clusterView(ProcessCluster.NodeProcess node) {
    try {
      return java.net.http.HttpClient.newHttpClient()
          .send(
              java.net.http.HttpRequest.newBuilder(
                      java.net.URI.create("http://127.0.0.1:" + node.httpPort() + "/api/cluster"))
                  .timeout(Duration.ofSeconds(20))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      return e.toString();
    }
  }

  static boolean isSkewed(Duration ahead) {
    return ahead.compareTo(SKEW.dividedBy(2)) > 0;
  }

  /** Each writer's clock against the database's: the median of (event time - insert time). */
  static Map<String, Duration> medianClockAheadByWriter(JournalTimeline journal) {
    Map<String, List<Duration>> samples = new HashMap<>();
    for (JournalTimeline.Row row : journal.rows()) {
      samples.computeIfAbsent(row.writer(), w -> new ArrayList<>()).add(row.clockAhead());
    }
    Map<String, Duration> median = new HashMap<>();
    samples.forEach(
        (writer, list) -> {
          list.sort(Comparator.naturalOrder());
          median.put(writer, list.get(list.size() / 2));
        });
    return median;
  }

  /**
   * Every moment a host treated a lease as over while someone held it: a takeover claim, or a
   * holder's command refused because the lease expired. Times are brought to the true clock by the
   * skew of the writing incarnation (0 or {@link #SKEW}), so the lease as its host meant it and the
   * moment another host judged it compare on one clock.
   */
  static List<EarlyEnd> leaseEnds(JournalTimeline journal, Map<String, Duration> aheadByWriter) {
    List<EarlyEnd> ends = new ArrayList<>();
    for (List<JournalTimeline.Row> rows : journal.byItem.values()) {
      Instant meantToEnd = null;
      boolean grantedBySkewed = false;
      long token = -1;
      for (JournalTimeline.Row row : rows) {
        boolean skewed = isSkewed(aheadByWriter.get(row.writer()));
        Instant trueTime = skewed ? row.at().minus(SKEW) : row.at();
        if (row.event() instanceof WorkItem.LeaseGranted g) {
          if (g.previousOwner() != null && meantToEnd != null) {
            ends.add(
                new EarlyEnd(
                    row.itemId(), grantedBySkewed, skewed, meantToEnd, trueTime, "takeover"));
          }
          token = g.token();
          meantToEnd = skewed ? g.leaseExpiresAt().minus(SKEW) : g.leaseExpiresAt();
          grantedBySkewed = skewed;
        } else if (row.event() instanceof WorkItem.LeaseRenewed r && r.token() == token) {
          meantToEnd = skewed ? r.leaseExpiresAt().minus(SKEW) : r.leaseExpiresAt();
          grantedBySkewed = skewed;
        } else if (row.event() instanceof WorkItem.StaleCommandRejected s
            && s.presentedToken() == token
            && s.currentToken() == token
            && s.reason().startsWith("lease expired")
            && meantToEnd != null) {
          ends.add(
              new EarlyEnd(
                  row.itemId(),
                  grantedBySkewed,
                  skewed,
                  meantToEnd,
                  trueTime,
                  s.command() + " refused: " + s.reason()));
        } else if (!(row.event() instanceof WorkItem.StaleCommandRejected)
            && !(row.event() instanceof WorkItem.MarkedAmbiguous)
            && !(row.event() instanceof WorkItem.EffectRecorded)
            && !(row.event() instanceof WorkItem.LeaseRenewed)) {
          meantToEnd = null; // an outcome, a release, a close: the lease ended by its holder
        }
      }
    }
    return ends;
  }

  private static Duration median(List<Duration> durations) {
    List<Duration> sorted = durations.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }
}

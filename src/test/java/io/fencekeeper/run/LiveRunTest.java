package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.dispatch.DispatchProtocol.RunReport;
import io.fencekeeper.dispatch.DispatchProtocol.ShardTally;
import io.fencekeeper.dispatch.ScopeRows;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.provider.budget.RunShare;
import io.fencekeeper.provider.budget.ThrottleShare;
import io.fencekeeper.run.governor.GovernorPolicy;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One running run as the coordinator steers it from the nodes' reports: its progress adds the
 * latest tally of each shard, whichever node sent it, so a shard that moved counts once; it is
 * settled by its tallies only when every shard's items are DONE or FAILED; shards with open items
 * that no live node hosts are orphans; and the run's cap is sliced between its nodes, by demand for
 * a new run and from what each node reports holding for a run a new coordinator recovered.
 */
class LiveRunTest {

  static final Instant NOW = Instant.parse("2026-11-30T02:00:00Z");
  static final String RUN = "nightly/2026-11-29";

  static ActorTestKit testKit;
  static TestProbe<BudgetKeeper.Share> shares;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
    shares = testKit.createTestProbe();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** A run of {@code items} items, its cap the default governor's normal cap (16). */
  static LiveRun run(long items, boolean recovered) {
    RunRequest request =
        new RunRequest(
            "nightly",
            LocalDate.parse("2026-11-29"),
            new Scope.Inline(List.of(new AccountCursor("acct-1", "c-1"))),
            NOW.plus(Duration.ofHours(4)),
            3,
            5);
    RunRecord record = RunRecord.created(request, "scope-1", items, "digest", NOW);
    RunShare share = new RunShare("default", RUN, Optional.empty(), shares.getRef());
    return new LiveRun(record, GovernorSettings.defaults(), share, NOW, recovered);
  }

  static RunReport report(int slice, int inFlight, int demand, ShardTally... shards) {
    return new RunReport(
        RUN, 0, slice, inFlight, demand, 4.0, 1.5, true, List.of(shards), List.of());
  }

  static RunReport report(int slice, int inFlight, int demand, ThrottleShare.Calls calls) {
    return new RunReport(
        RUN, 0, slice, inFlight, demand, 4.0, 1.5, true, List.of(), List.of(), calls);
  }

  /** Shard {@code shard}'s items: done, failed, closed, quarantined. */
  static ShardTally tally(int shard, long done, long failed, long closed, long quarantined) {
    return new ShardTally(shard, done, failed, closed, quarantined);
  }

  static RunItemStore.ShardFigures figures(Map<Integer, Long> totals) {
    Map<Integer, ScopeRows.Row> first = new java.util.TreeMap<>();
    totals.keySet().forEach(s -> first.put(s, new ScopeRows.Row(s, "acct-" + s, "c-1", (short) 0)));
    return new RunItemStore.ShardFigures(new java.util.TreeMap<>(totals), first);
  }

  @Test
  void progressAddsTheLatestTallyOfEachShardWhicheverNodeSentIt() {
    LiveRun live = run(20, false);

    live.reported("node-a", report(8, 2, 8, tally(1, 3, 1, 0, 0), tally(2, 2, 0, 1, 1)), 1);
    // shard 1 moved to node b, which counts the whole shard: what node a counted is in it
    live.reported("node-b", report(8, 3, 8, tally(1, 5, 1, 0, 0)), 2);

    Counts counts = live.progress(NOW).counts();
    assertEquals(new Counts(20, 5, 5, 7, 1, 1, 1), counts, "done 5 + 2, leased 2 + 3");
    assertEquals(1, live.failed());
    assertEquals(8.0, live.progress(NOW).itemsPerSecond(), "both nodes' rates");
  }

  /**
   * The run view a request answers for a night of a million items, after an hour of three nodes'
   * reports every second, is made of as much as the view of a thousand items after one report:
   * nothing in it grows with the night's size or its length (issue 50: the run view must not; the
   * governor's changes are bounded apart, below). Counted in the JSON nodes a request writes, not
   * timed.
   */
  @Test
  void theRunViewOfAMillionItemNightIsAsLargeAsOneOfAThousandItems() throws Exception {
    com.fasterxml.jackson.databind.ObjectMapper json =
        new com.fasterxml.jackson.databind.ObjectMapper().findAndRegisterModules();
    LiveRun small = run(1_000, false);
    small.reported("node-a", report(8, 2, 8, tally(0, 1, 0, 0, 0)), 1);
    int smallView = nodes(json.valueToTree(view(small)));

    LiveRun large = run(1_000_000, false);
    List<String> nodes = List.of("node-a", "node-b", "node-c");
    for (int second = 0; second < 3_600; second++) {
      for (int n = 0; n < nodes.size(); n++) {
        List<ShardTally> shards = new java.util.ArrayList<>();
        for (int shard = n; shard < 100; shard += nodes.size()) {
          shards.add(tally(shard, second * 2L, second % 7, 0, 0));
        }
        large.reported(
            nodes.get(n),
            new RunReport(RUN, 0, 21, 21, 40, 300, 0.5, true, shards, List.of(1, 2, 3)),
            second);
      }
    }
    RunView view = view(large);

    assertTrue(view.counts().done() > 700_000, "an hour of a night: " + view.counts());
    assertEquals(
        smallView,
        nodes(json.valueToTree(view)),
        "the same fields, no list or map longer: " + json.writeValueAsString(view));
  }

  @Test
  void theGovernorsChangesInTheRunViewAreTheLastFiftyHoweverLongTheNight() {
    LiveRun live = run(1_000_000, false);
    // a cap an operator changes every second for an hour: each change is a decision it logs
    for (int second = 0; second < 3_600; second++) {
      int cap = 8 + second % 8;
      live.governor()
          .change(GovernorSettings.defaults().withCaps(cap, cap, 1), NOW.plusSeconds(second));
    }
    assertEquals(50, view(live).governor().changes().size());
  }

  private static RunView view(LiveRun live) {
    return RunView.of(live.record(), live.progress(NOW), RunSignals.NONE);
  }

  /** The JSON nodes of a tree: its fields, elements and values, not the digits in them. */
  private static int nodes(com.fasterxml.jackson.databind.JsonNode tree) {
    int count = 1;
    for (com.fasterxml.jackson.databind.JsonNode child : tree) {
      count += nodes(child);
    }
    return count;
  }

  @Test
  void aReportOfTheRunBeforeItsResumeIsIgnored() {
    LiveRun live = run(20, false);
    live.reported("node-a", report(8, 0, 8, tally(1, 4, 0, 0, 0)), 1);

    live.reported(
        "node-b",
        new RunReport(RUN, 1, 8, 0, 8, 0, 0, true, List.of(tally(1, 9, 0, 0, 0)), List.of()),
        2);

    assertEquals(4, live.progress(NOW).counts().done());
    assertFalse(live.hasReportFrom("node-b"));
  }

  @Test
  void theCallsEveryNodeReportsAddUpForTheGovernorAndABeforeResumeReportsDoNot() {
    LiveRun live = run(20, false);
    // 4 + 4 of 80 throttled: 10 %, but each node alone has too few 429s to tell
    live.reported("node-a", report(8, 4, 8, new ThrottleShare.Calls(40, 4, 0)), 1);
    live.reported("node-b", report(8, 4, 8, new ThrottleShare.Calls(40, 4, 0)), 2);
    live.reported(
        "node-c",
        new RunReport(
            RUN, 1, 8, 0, 8, 0, 0, true, List.of(), List.of(), new ThrottleShare.Calls(9, 9, 0)),
        3);

    live.steer(NOW);

    assertEquals(GovernorPolicy.Mode.THROTTLED, live.governor().decision().mode());
    assertEquals(14, live.governor().cap(), "16 cut to the 90 % the provider accepted");
  }

  @Test
  void aNodeThatLeftHoldsNothingButItsShardsTalliesStay() {
    LiveRun live = run(20, false);
    live.reported("node-a", report(8, 6, 8, tally(1, 4, 0, 0, 0)), 1);

    live.nodeGone("node-a");

    Counts counts = live.progress(NOW).counts();
    assertEquals(0, counts.leased());
    assertEquals(4, counts.done(), "counted until the shard's next host reports it");
  }

  @Test
  void isSettledByItsTalliesOnlyWhenEveryShardsItemsAreDoneOrFailed() {
    LiveRun live = run(5, false);
    assertFalse(live.settledByTallies(), "its shards are not counted yet");
    live.shards(figures(Map.of(1, 3L, 2, 2L)));

    live.reported("node-a", report(8, 0, 0, tally(1, 2, 1, 0, 0)), 1);
    assertFalse(live.settledByTallies(), "shard 2 not heard of");

    live.reported("node-b", report(8, 0, 0, tally(2, 1, 0, 1, 0)), 2);
    assertFalse(live.settledByTallies(), "a closed item is not settled");

    live.reported("node-b", report(8, 0, 0, tally(2, 1, 0, 0, 1)), 3);
    assertFalse(live.settledByTallies(), "nor is a quarantined one");

    live.reported("node-b", report(8, 0, 0, tally(2, 2, 0, 0, 0)), 4);
    assertTrue(live.settledByTallies());
  }

  @Test
  void shardsWithOpenItemsThatNoLiveNodeHostsAreOrphans() {
    LiveRun live = run(9, false);
    assertEquals(List.of(), live.orphans(Set.of()), "nothing known of its shards yet");
    live.shards(figures(Map.of(1, 3L, 2, 2L, 3, 4L)));
    // every item of shard 2 ended, one way or another
    live.reported("node-a", report(8, 0, 0, tally(2, 1, 0, 1, 0), tally(3, 3, 0, 0, 0)), 1);

    assertEquals(List.of(1, 3), live.orphans(Set.of()));
    assertEquals(List.of(3), live.orphans(Set.of(1)));
    assertEquals(List.of(), live.orphans(Set.of(1, 3)));
  }

  @Test
  void aNewRunsCapIsSlicedByDemandWithNodesNotHeardFromTakenToWantAnEqualPart() {
    LiveRun live = run(1000, false);

    assertEquals(Map.of("node-a", 8, "node-b", 8), live.slices(List.of("node-a", "node-b")));

    live.reported("node-a", report(8, 0, 2, tally(1, 0, 0, 0, 0)), 1);
    live.reported("node-b", report(8, 8, 40, tally(2, 0, 0, 0, 0)), 2);
    Map<String, Integer> slices = live.slices(List.of("node-a", "node-b"));

    // a may fill its old slice of 8 until the shrink reaches it: b does not grow into it yet
    assertEquals(Map.of("node-a", 2, "node-b", 8), slices, "a shrinks at once, b waits");
    live.reported("node-a", report(2, 0, 2, tally(1, 0, 0, 0, 0)), 3);
    slices = live.slices(List.of("node-a", "node-b"));
    assertEquals(Map.of("node-a", 2, "node-b", 14), slices, "what a does not want goes to b");
    assertTrue(slices.values().stream().mapToInt(Integer::intValue).sum() <= 16);
  }

  @Test
  void aNodeToldASliceCountsWithItUntilItReportsTheSmallerOneItWasToldSince() {
    LiveRun live = run(1000, false);
    // a run's start: two nodes told 8 each before either reported, then a third node's agent
    assertEquals(Map.of("node-a", 8, "node-b", 8), live.slices(List.of("node-a", "node-b")));

    Map<String, Integer> three = live.slices(List.of("node-a", "node-b", "node-c"));

    assertTrue(three.get("node-a") < 8 && three.get("node-b") < 8, "shrunk at once: " + three);
    assertEquals(0, three.get("node-c"), "a and b may still fill their 8 each: " + three);

    // they report the slices they were told: c grows into what they gave up
    live.reported("node-a", report(three.get("node-a"), 0, 40), 1);
    live.reported("node-b", report(three.get("node-b"), 0, 40), 2);
    Map<String, Integer> after = live.slices(List.of("node-a", "node-b", "node-c"));
    assertTrue(after.get("node-c") > 0, "c has a slice once a and b applied theirs: " + after);
    assertTrue(after.values().stream().mapToInt(Integer::intValue).sum() <= 16, after.toString());

    // a grows, then shrinks before it reports: b does not grow into what a was told meanwhile
    live.reported("node-c", report(after.get("node-c"), 0, 0), 3);
    Map<String, Integer> grown = live.slices(List.of("node-a", "node-b", "node-c"));
    live.reported("node-c", report(grown.get("node-c"), 0, 40), 4);
    Map<String, Integer> shrunk = live.slices(List.of("node-a", "node-b", "node-c"));
    int mayUse =
        Math.max(grown.get("node-a"), shrunk.get("node-a"))
            + Math.max(grown.get("node-b"), shrunk.get("node-b"))
            + shrunk.get("node-c");
    assertTrue(mayUse <= 16, "what they may fill now: " + grown + " then " + shrunk);
  }

  @Test
  void aRecoveredRunLearnsEachNodesSliceFromItsReportAndNeverOverCommitsTheCap() {
    LiveRun live = run(1000, true);
    assertTrue(live.recovered());
    // what the previous coordinator gave them: a 10 (all in flight), b 6
    live.reported("node-a", report(10, 10, 10), 1);
    live.reported("node-b", report(6, 6, 40), 2);

    Map<String, Integer> slices = live.slices(List.of("node-a", "node-b"));

    assertEquals(8, slices.get("node-a"), "above its fair part: shrunk at once");
    assertEquals(6, slices.get("node-b"), "grows only once a's ten in flight have settled");

    live.reported("node-a", report(8, 8, 10), 3);
    assertEquals(Map.of("node-a", 8, "node-b", 8), live.slices(List.of("node-a", "node-b")));
  }
}

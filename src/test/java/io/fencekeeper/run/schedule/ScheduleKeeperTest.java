package io.fencekeeper.run.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.RunFilter;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Nightly schedules against a real node and journal, with an injected clock instead of waiting for
 * real nights: the 01:00 Europe/Berlin run on 30 November reconciles 29 November.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ScheduleKeeperTest {

  static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
  ManualClock clock;
  FencekeeperNode node;

  @BeforeAll
  void start() throws Exception {
    Path dataDir = Files.createTempDirectory("fencekeeper-schedules");
    clock = ManualClock.at("2026-11-29T23:50:00Z");
    Map<String, Object> overrides = TestNodes.overrides(TestDatabases.h2File(dataDir), dataDir);
    node =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .clock(clock)
            .workers(0)
            .start()
            .awaitUp(Duration.ofSeconds(30));
  }

  @AfterAll
  void stop() {
    node.close();
  }

  static NightlySchedule nightly(String job) {
    return new NightlySchedule(
        job,
        LocalTime.of(1, 0),
        LocalTime.of(6, 0),
        BERLIN,
        new Scope.Inline(List.of(new AccountCursor("acct-1", "c-1"))),
        5,
        0);
  }

  void at(String berlinLocal) {
    Instant target = java.time.LocalDateTime.parse(berlinLocal).atZone(BERLIN).toInstant();
    clock.advance(Duration.between(clock.instant(), target));
  }

  ScheduleKeeper.Review review(ScheduleKeeper keeper) throws Exception {
    return keeper.review().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  RunView run(String runId) throws Exception {
    return node.runs().get(runId).toCompletableFuture().get(10, TimeUnit.SECONDS).orElseThrow();
  }

  @Test
  void theOneOClockRunIsCreatedForYesterdayWithTheDeadlineAtSix() throws Exception {
    at("2026-11-30T01:00:00");
    ScheduleKeeper keeper = new ScheduleKeeper(List.of(nightly("on-time")), node.runs(), clock);
    ScheduleKeeper.Review review = review(keeper);
    assertEquals(List.of("on-time/2026-11-29"), review.created());
    RunView run = run("on-time/2026-11-29");
    assertEquals(RunState.RUNNING, run.state());
    assertEquals(Instant.parse("2026-11-30T05:00:00Z"), run.deadline());
  }

  @Test
  void aNodeRestartedAcrossTheFiringTimeCatchesTheRunUpBeforeTheDeadline() throws Exception {
    // the node was down from 23:50 to 02:30: nothing fired at 01:00
    at("2026-11-30T02:30:00");
    ScheduleKeeper restarted =
        new ScheduleKeeper(List.of(nightly("caught-up")), node.runs(), clock);
    ScheduleKeeper.Review review = review(restarted);
    assertEquals(List.of("caught-up/2026-11-29"), review.created());
    assertTrue(review.missed().isEmpty());
    // the next look finds it created: no second run, no report
    ScheduleKeeper.Review again = review(restarted);
    assertTrue(again.created().isEmpty());
  }

  @Test
  void aScheduleWhoseDeadlinePassedWhileDownIsReportedMissed() throws Exception {
    at("2026-11-30T07:00:00");
    ScheduleKeeper keeper = new ScheduleKeeper(List.of(nightly("missed")), node.runs(), clock);
    ScheduleKeeper.Review review = review(keeper);
    assertTrue(review.created().isEmpty());
    assertEquals(List.of("missed/2026-11-29"), review.missed());
    assertEquals(java.util.Set.of("missed/2026-11-29"), keeper.missedRuns());
    assertTrue(node.runs().get("missed/2026-11-29").toCompletableFuture().get().isEmpty());
  }

  @Test
  void twoNodesFiringTheSameScheduleCreateOneRun() throws Exception {
    at("2026-11-30T01:00:00");
    // every node runs a keeper; both talk to the one coordinator singleton
    ScheduleKeeper first = new ScheduleKeeper(List.of(nightly("twice")), node.runs(), clock);
    ScheduleKeeper second = new ScheduleKeeper(List.of(nightly("twice")), node.runs(), clock);
    var a = first.review().toCompletableFuture();
    var b = second.review().toCompletableFuture();
    ScheduleKeeper.Review ra = a.get(60, TimeUnit.SECONDS);
    ScheduleKeeper.Review rb = b.get(60, TimeUnit.SECONDS);
    assertEquals(1, ra.created().size() + rb.created().size(), ra + " / " + rb);
    // the second either fires too and is told the run exists (a duplicate delivery), or, when the
    // first's create was in before its look, sees the run and fires nothing: both are one run
    int duplicates = ra.duplicates().size() + rb.duplicates().size();
    assertTrue(duplicates <= 1, ra + " / " + rb);
    assertEquals(duplicates, first.duplicateDeliveries() + second.duplicateDeliveries());
    List<RunView> runs =
        node.runs()
            .list(new RunFilter(Set.of(), "twice", null, null, null, 10))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS)
            .runs();
    assertEquals(1, runs.size());
  }
}

package io.fencekeeper.run.schedule;

import static io.fencekeeper.run.schedule.ScheduleCalendarTest.nightly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.fencekeeper.run.schedule.CatchUp.AlreadyCreated;
import io.fencekeeper.run.schedule.CatchUp.Decision;
import io.fencekeeper.run.schedule.CatchUp.Fire;
import io.fencekeeper.run.schedule.CatchUp.Missed;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CatchUpTest {

  private final NightlySchedule schedule = nightly("01:00", "06:00"); // Europe/Berlin, CET in Nov
  private final Set<String> runs = new HashSet<>();

  private boolean runExists(String job, LocalDate businessDate) {
    return runs.contains(job + "/" + businessDate);
  }

  @Test
  void clusterBackBeforeTheDeadlineFiresTheRunLate() {
    Instant restart = Instant.parse("2026-11-30T02:10:00Z"); // 03:10 Berlin

    Decision decision = CatchUp.latest(schedule, restart, this::runExists);

    Fire fire = assertInstanceOf(Fire.class, decision);
    assertEquals(LocalDate.of(2026, 11, 29), fire.firing().businessDate());
    assertEquals(Instant.parse("2026-11-30T05:00:00Z"), fire.firing().deadline());
  }

  @Test
  void clusterBackAfterTheDeadlineReportsTheRunMissed() {
    Instant restart = Instant.parse("2026-11-30T06:30:00Z"); // 07:30 Berlin

    Decision decision = CatchUp.latest(schedule, restart, this::runExists);

    Missed missed = assertInstanceOf(Missed.class, decision);
    assertEquals("payment-reconciliation/2026-11-29", missed.firing().runId());
  }

  @Test
  void atTheDeadlineItselfTheRunIsMissed() {
    Decision decision =
        CatchUp.latest(schedule, Instant.parse("2026-11-30T05:00:00Z"), this::runExists);

    assertInstanceOf(Missed.class, decision);
  }

  @Test
  void atTheFiringInstantTheRunFires() {
    Decision decision =
        CatchUp.latest(schedule, Instant.parse("2026-11-30T00:00:00Z"), this::runExists);

    assertEquals(
        LocalDate.of(2026, 11, 29), assertInstanceOf(Fire.class, decision).firing().businessDate());
  }

  @Test
  void existingRunIsAlreadyCreatedBeforeAndAfterTheDeadline() {
    runs.add("payment-reconciliation/2026-11-29");

    assertInstanceOf(
        AlreadyCreated.class,
        CatchUp.latest(schedule, Instant.parse("2026-11-30T02:00:00Z"), this::runExists));
    assertInstanceOf(
        AlreadyCreated.class,
        CatchUp.latest(schedule, Instant.parse("2026-11-30T20:00:00Z"), this::runExists));
  }

  @Test
  void beforeTonightsFiringTheLatestIsLastNights() {
    runs.add("payment-reconciliation/2026-11-28");
    Instant halfPastMidnight = Instant.parse("2026-11-29T23:30:00Z"); // 00:30 Berlin on the 30th

    Decision decision = CatchUp.latest(schedule, halfPastMidnight, this::runExists);

    assertEquals(
        LocalDate.of(2026, 11, 28),
        assertInstanceOf(AlreadyCreated.class, decision).firing().businessDate());
  }

  @Test
  void twoNodesDecidingTheSameFiringCreateOneRun() {
    Instant now = Instant.parse("2026-11-30T00:00:01Z");
    int created = 0;
    for (String node : List.of("node-a", "node-b", "node-a-retried-timer")) {
      Decision decision = CatchUp.latest(schedule, now, this::runExists);
      if (decision instanceof Fire fire && runs.add(fire.firing().runId())) {
        created++;
      }
    }

    assertEquals(1, created);
    assertEquals(Set.of("payment-reconciliation/2026-11-29"), runs);
  }

  @Test
  void threeNightsDownAreReportedMissedAndTonightIsCaughtUp() {
    runs.add("payment-reconciliation/2026-11-25");
    Instant lastReviewed = Instant.parse("2026-11-26T12:00:00Z");
    Instant restart = Instant.parse("2026-11-30T03:00:00Z"); // 04:00 Berlin, before 06:00

    List<Decision> decisions = CatchUp.since(schedule, lastReviewed, restart, this::runExists);

    assertEquals(
        List.of(Missed.class, Missed.class, Missed.class, Fire.class),
        decisions.stream().map(Object::getClass).toList());
    assertEquals(
        List.of(
            LocalDate.of(2026, 11, 26),
            LocalDate.of(2026, 11, 27),
            LocalDate.of(2026, 11, 28),
            LocalDate.of(2026, 11, 29)),
        decisions.stream().map(d -> d.firing().businessDate()).toList());
  }
}

package io.fencekeeper.run.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.scope.Scope;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScheduleCalendarTest {

  static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

  static NightlySchedule nightly(String start, String deadline) {
    return new NightlySchedule(
        "payment-reconciliation",
        LocalTime.parse(start),
        LocalTime.parse(deadline),
        BERLIN,
        new Scope.Csv("examples/accounts.csv"),
        5,
        10);
  }

  @Test
  void theOneOClockRunOnThirtiethNovemberReconcilesTheTwentyNinth() {
    Firing firing =
        ScheduleCalendar.firingOn(nightly("01:00", "06:00"), LocalDate.of(2026, 11, 30));

    assertEquals(Instant.parse("2026-11-30T00:00:00Z"), firing.scheduledAt());
    assertEquals(LocalDate.of(2026, 11, 29), firing.businessDate());
    assertEquals(Instant.parse("2026-11-30T05:00:00Z"), firing.deadline());
    assertEquals("payment-reconciliation/2026-11-29", firing.runId());
  }

  @Test
  void deadlineEarlierThanStartIsOnTheNextDay() {
    Firing firing =
        ScheduleCalendar.firingOn(nightly("23:00", "05:00"), LocalDate.of(2026, 11, 29));

    assertEquals(Instant.parse("2026-11-29T22:00:00Z"), firing.scheduledAt());
    assertEquals(LocalDate.of(2026, 11, 28), firing.businessDate());
    assertEquals(Instant.parse("2026-11-30T04:00:00Z"), firing.deadline());
  }

  @Test
  void springForwardShortensTheNightByAnHour() {
    // Berlin, Sunday 29 March 2026: 02:00 CET becomes 03:00 CEST
    Firing firing = ScheduleCalendar.firingOn(nightly("01:00", "06:00"), LocalDate.of(2026, 3, 29));

    assertEquals(Instant.parse("2026-03-29T00:00:00Z"), firing.scheduledAt());
    assertEquals(Instant.parse("2026-03-29T04:00:00Z"), firing.deadline());
    assertEquals(Duration.ofHours(4), Duration.between(firing.scheduledAt(), firing.deadline()));
  }

  @Test
  void startInTheSpringForwardGapFiresAfterTheGap() {
    Firing firing = ScheduleCalendar.firingOn(nightly("02:30", "06:00"), LocalDate.of(2026, 3, 29));

    assertEquals(Instant.parse("2026-03-29T01:30:00Z"), firing.scheduledAt()); // 03:30 CEST
    assertEquals(LocalDate.of(2026, 3, 28), firing.businessDate());
    assertEquals(Instant.parse("2026-03-29T04:00:00Z"), firing.deadline());
  }

  @Test
  void deadlineThatTheGapShiftWouldPutBeforeTheStartMovesToTheNextDay() {
    // start 02:30 shifts to 03:30 CEST; 03:00 CEST that day is before it
    Firing firing = ScheduleCalendar.firingOn(nightly("02:30", "03:00"), LocalDate.of(2026, 3, 29));

    assertEquals(Instant.parse("2026-03-29T01:30:00Z"), firing.scheduledAt());
    assertEquals(Instant.parse("2026-03-30T01:00:00Z"), firing.deadline());
  }

  @Test
  void fallBackLengthensTheNightByAnHour() {
    // Berlin, Sunday 25 October 2026: 03:00 CEST becomes 02:00 CET
    Firing firing =
        ScheduleCalendar.firingOn(nightly("01:00", "06:00"), LocalDate.of(2026, 10, 25));

    assertEquals(Instant.parse("2026-10-24T23:00:00Z"), firing.scheduledAt());
    assertEquals(LocalDate.of(2026, 10, 24), firing.businessDate());
    assertEquals(Instant.parse("2026-10-25T05:00:00Z"), firing.deadline());
    assertEquals(Duration.ofHours(6), Duration.between(firing.scheduledAt(), firing.deadline()));
  }

  @Test
  void startInTheFallBackOverlapFiresOnceAtItsFirstOccurrence() {
    NightlySchedule schedule = nightly("02:30", "06:00");

    List<Firing> firings =
        ScheduleCalendar.firingsBetween(
            schedule, Instant.parse("2026-10-24T12:00:00Z"), Instant.parse("2026-10-25T12:00:00Z"));

    assertEquals(1, firings.size());
    assertEquals(Instant.parse("2026-10-25T00:30:00Z"), firings.get(0).scheduledAt()); // CEST
  }

  @Test
  void firingsAcrossBothTransitionsAreOnePerNightWithConsecutiveBusinessDates() {
    NightlySchedule schedule = nightly("01:00", "06:00");

    List<Firing> march =
        ScheduleCalendar.firingsBetween(
            schedule, Instant.parse("2026-03-27T12:00:00Z"), Instant.parse("2026-03-31T12:00:00Z"));
    List<Firing> october =
        ScheduleCalendar.firingsBetween(
            schedule, Instant.parse("2026-10-23T12:00:00Z"), Instant.parse("2026-10-27T12:00:00Z"));

    assertEquals(
        List.of(
            LocalDate.of(2026, 3, 27),
            LocalDate.of(2026, 3, 28),
            LocalDate.of(2026, 3, 29),
            LocalDate.of(2026, 3, 30)),
        march.stream().map(Firing::businessDate).toList());
    assertEquals(
        Duration.ofHours(23),
        Duration.between(march.get(1).scheduledAt(), march.get(2).scheduledAt()));
    assertEquals(
        Duration.ofHours(25),
        Duration.between(october.get(1).scheduledAt(), october.get(2).scheduledAt()));
  }

  @Test
  void latestFiringIncludesTheFiringInstantItself() {
    NightlySchedule schedule = nightly("01:00", "06:00");
    Instant firingInstant = Instant.parse("2026-11-30T00:00:00Z");

    assertEquals(
        LocalDate.of(2026, 11, 29),
        ScheduleCalendar.latestFiringAtOrBefore(schedule, firingInstant)
            .orElseThrow()
            .businessDate());
    assertEquals(
        LocalDate.of(2026, 11, 28),
        ScheduleCalendar.latestFiringAtOrBefore(schedule, firingInstant.minusNanos(1))
            .orElseThrow()
            .businessDate());
    assertEquals(
        LocalDate.of(2026, 11, 30),
        ScheduleCalendar.nextFiringAfter(schedule, firingInstant).businessDate());
  }

  @Test
  void firingsBetweenIsExclusiveOfTheStartAndInclusiveOfTheEnd() {
    NightlySchedule schedule = nightly("01:00", "06:00");
    Instant first = Instant.parse("2026-11-01T00:00:00Z");
    Instant tenth = Instant.parse("2026-11-10T00:00:00Z");

    List<Firing> firings = ScheduleCalendar.firingsBetween(schedule, first, tenth);

    assertEquals(9, firings.size());
    assertEquals(LocalDate.of(2026, 11, 1), firings.get(0).businessDate());
    assertEquals(tenth, firings.get(8).scheduledAt());
    assertTrue(ScheduleCalendar.firingsBetween(schedule, tenth, first).isEmpty());
  }
}

package io.fencekeeper.run.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.scope.Scope;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Calendar invariants over 2,000 random instants, zones and schedule times each, from a fixed seed
 * (reproducible; the failure message names the case).
 */
class ScheduleCalendarInvariantsTest {

  // Sao Paulo fell back across midnight until 2019; Lord Howe shifts by half an hour
  static final List<String> ZONES =
      List.of(
          "Europe/Berlin",
          "America/New_York",
          "America/Sao_Paulo",
          "Australia/Lord_Howe",
          "Asia/Kolkata",
          "UTC");

  record Case(Instant now, String zone, int startMinute, int deadlineMinute) {}

  static List<Case> cases(long seed) {
    Random random = new Random(seed);
    return random
        .longs(4000, 946_684_800L, 4_102_444_800L)
        .mapToObj(
            epochSecond ->
                new Case(
                    Instant.ofEpochSecond(epochSecond),
                    ZONES.get(random.nextInt(ZONES.size())),
                    random.nextInt(1440),
                    random.nextInt(1440)))
        .filter(c -> c.startMinute() != c.deadlineMinute())
        .limit(2000)
        .toList();
  }

  @Test
  void latestFiringIsAtOrBeforeNowAndTheNextStrictlyAfter() {
    for (Case c : cases(11)) {
      NightlySchedule schedule = schedule(c);
      Firing latest = ScheduleCalendar.latestFiringAtOrBefore(schedule, c.now()).orElseThrow();
      Firing next = ScheduleCalendar.nextFiringAfter(schedule, c.now());
      assertTrue(!latest.scheduledAt().isAfter(c.now()), c.toString());
      assertTrue(next.scheduledAt().isAfter(c.now()), c.toString());
      assertEquals(latest.businessDate().plusDays(1), next.businessDate(), c.toString());
      assertTrue(
          ScheduleCalendar.firingsBetween(schedule, latest.scheduledAt(), c.now()).isEmpty(),
          c.toString());
    }
  }

  @Test
  void businessDateIsTheLocalDateOfTheFiringMinusOneAndTheDeadlineFollowsWithinADay() {
    for (Case c : cases(29)) {
      NightlySchedule schedule = schedule(c);
      Firing latest = ScheduleCalendar.latestFiringAtOrBefore(schedule, c.now()).orElseThrow();
      Duration window = Duration.between(latest.scheduledAt(), latest.deadline());
      assertEquals(
          latest.scheduledAt().atZone(schedule.zone()).toLocalDate().minusDays(1),
          latest.businessDate(),
          c.toString());
      assertTrue(!window.isNegative() && !window.isZero(), c.toString());
      assertTrue(window.compareTo(Duration.ofHours(26)) < 0, c.toString());
    }
  }

  private static NightlySchedule schedule(Case c) {
    return new NightlySchedule(
        "nightly",
        LocalTime.of(c.startMinute() / 60, c.startMinute() % 60),
        LocalTime.of(c.deadlineMinute() / 60, c.deadlineMinute() % 60),
        ZoneId.of(c.zone()),
        new Scope.Csv("accounts.csv"),
        3,
        0);
  }
}

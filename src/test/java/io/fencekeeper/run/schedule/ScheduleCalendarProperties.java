package io.fencekeeper.run.schedule;

import io.fencekeeper.run.scope.Scope;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

class ScheduleCalendarProperties {

  @Property(tries = 2000)
  boolean latestFiringIsAtOrBeforeNowAndTheNextStrictlyAfter(
      @ForAll @LongRange(min = 946_684_800L, max = 4_102_444_800L) long epochSecond,
      @ForAll("zones") String zone,
      @ForAll @IntRange(min = 0, max = 1439) int startMinute,
      @ForAll @IntRange(min = 0, max = 1439) int deadlineMinute) {
    Assume.that(startMinute != deadlineMinute);
    NightlySchedule schedule = schedule(zone, startMinute, deadlineMinute);
    Instant now = Instant.ofEpochSecond(epochSecond);

    Firing latest = ScheduleCalendar.latestFiringAtOrBefore(schedule, now).orElseThrow();
    Firing next = ScheduleCalendar.nextFiringAfter(schedule, now);

    return !latest.scheduledAt().isAfter(now)
        && next.scheduledAt().isAfter(now)
        && next.businessDate().equals(latest.businessDate().plusDays(1))
        && ScheduleCalendar.firingsBetween(schedule, latest.scheduledAt(), now).isEmpty();
  }

  @Property(tries = 2000)
  boolean businessDateIsTheLocalDateOfTheFiringMinusOneAndTheDeadlineFollowsWithinADay(
      @ForAll @LongRange(min = 946_684_800L, max = 4_102_444_800L) long epochSecond,
      @ForAll("zones") String zone,
      @ForAll @IntRange(min = 0, max = 1439) int startMinute,
      @ForAll @IntRange(min = 0, max = 1439) int deadlineMinute) {
    Assume.that(startMinute != deadlineMinute);
    NightlySchedule schedule = schedule(zone, startMinute, deadlineMinute);

    Firing latest =
        ScheduleCalendar.latestFiringAtOrBefore(schedule, Instant.ofEpochSecond(epochSecond))
            .orElseThrow();
    Duration window = Duration.between(latest.scheduledAt(), latest.deadline());

    return latest
            .businessDate()
            .equals(latest.scheduledAt().atZone(schedule.zone()).toLocalDate().minusDays(1))
        && !window.isNegative()
        && !window.isZero()
        && window.compareTo(Duration.ofHours(26)) < 0;
  }

  @Provide
  Arbitrary<String> zones() {
    // Sao Paulo fell back across midnight until 2019; Lord Howe shifts by half an hour
    return Arbitraries.of(
        "Europe/Berlin",
        "America/New_York",
        "America/Sao_Paulo",
        "Australia/Lord_Howe",
        "Asia/Kolkata",
        "UTC");
  }

  private static NightlySchedule schedule(String zone, int startMinute, int deadlineMinute) {
    return new NightlySchedule(
        "nightly",
        LocalTime.of(startMinute / 60, startMinute % 60),
        LocalTime.of(deadlineMinute / 60, deadlineMinute % 60),
        ZoneId.of(zone),
        new Scope.Csv("accounts.csv"),
        3,
        0);
  }
}

package io.fencekeeper.run.schedule;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * When a {@link NightlySchedule} fires. Pure functions of the schedule and an instant: the caller
 * supplies "now" from its clock, so every node computes the same firings.
 *
 * <p>The firing of local day D is at {@code start} on D in the schedule's zone and reconciles
 * business date D − 1 (the 01:00 run on 30 November reconciles 29 November). Local times follow
 * {@link ZonedDateTime#of}: a start in a spring-forward gap fires later by the length of the gap
 * (02:30 in Berlin on the last Sunday of March fires at 03:30 CEST), a start in an autumn overlap
 * fires at its first occurrence (the earlier offset). The business date is taken from D, so it
 * stays one date per night even in the rare zone whose gap pushes a start past midnight.
 *
 * <p>The deadline is the first occurrence of the deadline local time strictly after the firing: on
 * D when the deadline time is later than the start time, otherwise on D + 1 (start 23:00, deadline
 * 05:00 runs across midnight). If a gap shift would put it at or before the firing, it is the next
 * day's occurrence.
 */
public final class ScheduleCalendar {

  private ScheduleCalendar() {}

  /** The firing on local day {@code day} of the schedule's zone. */
  public static Firing firingOn(NightlySchedule schedule, LocalDate day) {
    ZonedDateTime scheduled = ZonedDateTime.of(day, schedule.start(), schedule.zone());
    LocalDate deadlineDay = schedule.deadline().isAfter(schedule.start()) ? day : day.plusDays(1);
    ZonedDateTime deadline = ZonedDateTime.of(deadlineDay, schedule.deadline(), schedule.zone());
    while (!deadline.isAfter(scheduled)) {
      deadlineDay = deadlineDay.plusDays(1);
      deadline = ZonedDateTime.of(deadlineDay, schedule.deadline(), schedule.zone());
    }
    return new Firing(
        schedule.job(), scheduled.toInstant(), day.minusDays(1), deadline.toInstant());
  }

  /**
   * The most recent firing at or before {@code now}; empty only when none is representable (an
   * instant at the edge of the supported date range).
   */
  public static Optional<Firing> latestFiringAtOrBefore(NightlySchedule schedule, Instant now) {
    try {
      LocalDate today = now.atZone(schedule.zone()).toLocalDate();
      // from tomorrow backwards: a zone that falls back across midnight revisits yesterday's date
      for (LocalDate day = today.plusDays(1);
          !day.isBefore(today.minusDays(2));
          day = day.minusDays(1)) {
        Firing firing = firingOn(schedule, day);
        if (!firing.scheduledAt().isAfter(now)) {
          return Optional.of(firing);
        }
      }
    } catch (DateTimeException outOfRange) {
      // beyond LocalDate's range: there is no firing to report
    }
    return Optional.empty();
  }

  /** The first firing strictly after {@code now}. */
  public static Firing nextFiringAfter(NightlySchedule schedule, Instant now) {
    LocalDate today = now.atZone(schedule.zone()).toLocalDate();
    for (LocalDate day = today.minusDays(1); ; day = day.plusDays(1)) {
      Firing firing = firingOn(schedule, day);
      if (firing.scheduledAt().isAfter(now)) {
        return firing;
      }
    }
  }

  /**
   * Every firing in {@code (fromExclusive, toInclusive]}, in order; one per local day, so the
   * caller bounds the range.
   */
  public static List<Firing> firingsBetween(
      NightlySchedule schedule, Instant fromExclusive, Instant toInclusive) {
    List<Firing> firings = new ArrayList<>();
    if (!toInclusive.isAfter(fromExclusive)) {
      return firings;
    }
    Firing firing = nextFiringAfter(schedule, fromExclusive);
    while (!firing.scheduledAt().isAfter(toInclusive)) {
      firings.add(firing);
      firing = firingOn(schedule, dayOf(firing).plusDays(1));
    }
    return firings;
  }

  /** The local day a firing belongs to: the day after the business date it reconciles. */
  static LocalDate dayOf(Firing firing) {
    return firing.businessDate().plusDays(1);
  }
}

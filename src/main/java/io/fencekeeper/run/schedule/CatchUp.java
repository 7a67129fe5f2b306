package io.fencekeeper.run.schedule;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.function.BiPredicate;

/**
 * What to do about a schedule's firings when a node looks at it, on every timer tick and above all
 * at start-up after the cluster was down. A firing whose run does not exist yet is created late
 * ({@link Fire}) while its deadline has not passed; once the deadline has passed it is {@link
 * Missed}, to be reported, never silently dropped. Firing stays safe to repeat because run creation
 * is idempotent: two nodes deciding {@code Fire} for the same firing create one run.
 *
 * <p>{@link #latest} looks at the latest firing only: the one a timer or a restart must act on.
 * Older firings can only be missed (a deadline is less than a day after its start, before the next
 * firing), and reporting them needs to know since when to look; {@link #since} does that for a
 * caller that keeps such a watermark (for example the last instant it reviewed, journaled), one
 * existence check per night in the window.
 */
public final class CatchUp {

  /** The decision for one firing. */
  public sealed interface Decision permits Fire, Missed, AlreadyCreated {
    Firing firing();
  }

  /** No run yet and the deadline is ahead: create the run now, even if late. */
  public record Fire(Firing firing) implements Decision {}

  /** No run and the deadline has passed: report the missed run. */
  public record Missed(Firing firing) implements Decision {}

  /** The run exists: nothing to do (a duplicate delivery of the firing lands here). */
  public record AlreadyCreated(Firing firing) implements Decision {}

  private CatchUp() {}

  /**
   * The decision for the latest firing at or before {@code now}.
   *
   * @param runExists whether a run already exists for (job, businessDate)
   */
  public static Decision latest(
      NightlySchedule schedule, Instant now, BiPredicate<String, LocalDate> runExists) {
    Firing firing =
        ScheduleCalendar.latestFiringAtOrBefore(schedule, now)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "no firing of " + schedule.job() + " before " + now));
    return decide(firing, now, runExists);
  }

  /** The decisions for every firing in {@code (fromExclusive, now]}, oldest first. */
  public static List<Decision> since(
      NightlySchedule schedule,
      Instant fromExclusive,
      Instant now,
      BiPredicate<String, LocalDate> runExists) {
    return ScheduleCalendar.firingsBetween(schedule, fromExclusive, now).stream()
        .map(firing -> decide(firing, now, runExists))
        .toList();
  }

  static Decision decide(Firing firing, Instant now, BiPredicate<String, LocalDate> runExists) {
    if (runExists.test(firing.job(), firing.businessDate())) {
      return new AlreadyCreated(firing);
    }
    // at the deadline itself the run would be closed the moment it is created
    return now.isBefore(firing.deadline()) ? new Fire(firing) : new Missed(firing);
  }
}

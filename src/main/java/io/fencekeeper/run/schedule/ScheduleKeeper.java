package io.fencekeeper.run.schedule;

import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunService;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fires the nightly schedules of this node: at start-up (catching up a firing missed while the
 * cluster was down, or reporting it missed when its deadline has passed) and on every tick after.
 * Every node runs one; firing twice is harmless because run creation is idempotent, and a duplicate
 * delivery is counted, not hidden.
 */
public final class ScheduleKeeper {

  private static final Logger log = LoggerFactory.getLogger(ScheduleKeeper.class);

  /** What one look at the schedules did, for logs, metrics and tests. */
  public record Review(List<String> created, List<String> duplicates, List<String> missed) {}

  private final List<NightlySchedule> schedules;
  private final RunService runs;
  private final Clock clock;
  private final Set<String> missed = ConcurrentHashMap.newKeySet();
  private final AtomicLong duplicateDeliveries = new AtomicLong();

  public ScheduleKeeper(List<NightlySchedule> schedules, RunService runs, Clock clock) {
    this.schedules = List.copyOf(schedules);
    this.runs = runs;
    this.clock = clock;
  }

  /** Looks at every schedule's latest firing and acts on it. */
  public CompletionStage<Review> review() {
    if (schedules.isEmpty()) {
      return CompletableFuture.completedFuture(new Review(List.of(), List.of(), List.of()));
    }
    Instant now = clock.instant();
    // the runs of each schedule's latest firing: asked for by id, whatever the history holds
    Set<String> latest =
        schedules.stream()
            .map(schedule -> ScheduleCalendar.latestFiringAtOrBefore(schedule, now))
            .flatMap(java.util.Optional::stream)
            .map(Firing::runId)
            .collect(Collectors.toSet());
    return runs.existing(latest)
        .thenCompose(
            runIds -> {
              List<String> created = Collections.synchronizedList(new ArrayList<>());
              List<String> duplicates = Collections.synchronizedList(new ArrayList<>());
              List<String> missedNow = new ArrayList<>();
              List<CompletableFuture<Void>> firing = new ArrayList<>();
              for (NightlySchedule schedule : schedules) {
                CatchUp.Decision decision =
                    CatchUp.latest(schedule, now, (job, date) -> runIds.contains(runId(job, date)));
                if (decision instanceof CatchUp.Fire fire) {
                  firing.add(fire(schedule, fire.firing(), created, duplicates));
                } else if (decision instanceof CatchUp.Missed m) {
                  if (missed.add(m.firing().runId())) {
                    log.warn(
                        "schedule {}: run {} was missed (deadline {} passed while no node fired it)",
                        schedule.job(),
                        m.firing().runId(),
                        m.firing().deadline());
                  }
                  missedNow.add(m.firing().runId());
                }
              }
              return CompletableFuture.allOf(firing.toArray(CompletableFuture[]::new))
                  .thenApply(
                      done -> new Review(List.copyOf(created), List.copyOf(duplicates), missedNow));
            });
  }

  private CompletableFuture<Void> fire(
      NightlySchedule schedule, Firing firing, List<String> created, List<String> duplicates) {
    RunRequest request =
        new RunRequest(
            schedule.job(),
            firing.businessDate(),
            schedule.scope(),
            firing.deadline(),
            schedule.maxAttempts(),
            schedule.maxFailedItems());
    return runs.create(request)
        .toCompletableFuture()
        .handle(
            (reply, failure) -> {
              if (failure != null) {
                log.error(
                    "schedule {}: could not create run {}",
                    schedule.job(),
                    firing.runId(),
                    failure);
              } else if (reply instanceof RunCoordinator.Created) {
                log.info(
                    "schedule {}: created run {} (scheduled {}, deadline {})",
                    schedule.job(),
                    firing.runId(),
                    firing.scheduledAt(),
                    firing.deadline());
                created.add(firing.runId());
              } else {
                // another node (or a retried timer) fired first: the classic duplicate delivery
                duplicateDeliveries.incrementAndGet();
                duplicates.add(firing.runId());
              }
              return null;
            });
  }

  private static String runId(String job, LocalDate date) {
    return job + "/" + date;
  }

  /** Runs reported missed since this node started. */
  public Set<String> missedRuns() {
    return Set.copyOf(missed);
  }

  public long duplicateDeliveries() {
    return duplicateDeliveries.get();
  }
}

package io.fencekeeper.run;

import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The coordinator's children: one {@link RunDispatcher} per running run, and the latest progress
 * each reported. Not journaled: after a failover the coordinator starts them again from its
 * recovered state and they resume from {@code run_item}.
 *
 * <p>Dispatchers are watched: one that fails (a bug, or input that slipped past validation) is
 * started again from the coordinator's state after a back-off, and a run whose dispatcher keeps
 * failing ends FAILED with the reason, instead of staying RUNNING with nobody dispatching it.
 */
final class RunDispatchers {

  /** Failures of one run's dispatcher after which the run ends FAILED. */
  static final int MAX_FAILURES = 3;

  private final ActorContext<RunCoordinator.Command> ctx;
  private final RunDispatcher.Dependencies deps;
  private final ActorRef<RunDispatcher.ProgressReport> progressTo;
  private final ActorRef<RunDispatcher.Finished> finishedTo;
  private final Map<String, Incarnation> running = new HashMap<>();
  private final Map<String, String> causes = new HashMap<>();
  private final Map<String, RunProgress> progress = new HashMap<>();
  private final Map<String, Integer> failures = new HashMap<>();
  private int incarnations;

  RunDispatchers(
      ActorContext<RunCoordinator.Command> ctx,
      RunDispatcher.Dependencies deps,
      ActorRef<RunDispatcher.ProgressReport> progressTo,
      ActorRef<RunDispatcher.Finished> finishedTo) {
    this.ctx = ctx;
    this.deps = deps;
    this.progressTo = progressTo;
    this.finishedTo = finishedTo;
  }

  /** Starts the run's dispatcher, replacing one that runs already (a resume). */
  void start(RunRecord run, boolean resume, GovernorSettings governor) {
    stop(run.runId());
    progress.remove(run.runId());
    int incarnation = ++incarnations;
    String name =
        "dispatcher-"
            + URLEncoder.encode(run.runId(), StandardCharsets.UTF_8)
            + "-"
            + run.resumes()
            + "-"
            + incarnation;
    ActorRef<RunCoordinator.Command> coordinator = ctx.getSelf();
    Behavior<ToDispatcher> dispatcher =
        Behaviors.intercept(
            () ->
                new CrashReport<>(
                    ToDispatcher.class,
                    cause ->
                        coordinator.tell(
                            new RunCoordinator.DispatcherCrashed(
                                run.runId(), incarnation, RunCoordinator.summary(cause)))),
            RunDispatcher.create(run, resume, governor, deps, progressTo, finishedTo));
    ActorRef<ToDispatcher> ref = ctx.spawn(dispatcher, name);
    // a message, not a signal: a persistent actor does not see its children's ChildFailed
    ctx.watchWith(ref, new RunCoordinator.DispatcherStopped(run.runId(), incarnation));
    running.put(run.runId(), new Incarnation(ref, incarnation));
  }

  private record Incarnation(ActorRef<ToDispatcher> ref, int number) {}

  void stop(String runId) {
    Incarnation previous = running.remove(runId);
    if (previous != null) {
      ctx.unwatch(previous.ref());
      ctx.stop(previous.ref());
    }
  }

  /** Why the current dispatcher of {@code runId} failed, to report when it has stopped. */
  void crashed(String runId, int incarnation, String cause) {
    if (isCurrent(runId, incarnation)) {
      causes.put(runId, cause);
    }
  }

  /**
   * The current dispatcher of {@code runId} stopped without being asked to (it failed): how often
   * that run's dispatcher has failed now, and why the last time; empty for an older incarnation.
   */
  Optional<Failure> stopped(String runId, int incarnation) {
    if (!isCurrent(runId, incarnation)) {
      return Optional.empty();
    }
    running.remove(runId);
    return Optional.of(
        new Failure(
            runId,
            failures.merge(runId, 1, Integer::sum),
            causes.getOrDefault(runId, "it stopped")));
  }

  private boolean isCurrent(String runId, int incarnation) {
    Incarnation current = running.get(runId);
    return current != null && current.number() == incarnation;
  }

  /** The {@code count}th failure of the dispatcher of {@code runId}. */
  record Failure(String runId, int count, String cause) {}

  boolean isRunning(String runId) {
    return running.containsKey(runId);
  }

  void tell(String runId, RunDispatcher.Command command) {
    Incarnation dispatcher = running.get(runId);
    if (dispatcher != null) {
      dispatcher.ref().tell(command);
    }
  }

  void tellAll(RunDispatcher.Command command) {
    running.values().forEach(d -> d.ref().tell(command));
  }

  void reported(RunDispatcher.ProgressReport report) {
    progress.put(report.runId(), report.progress());
  }

  Optional<RunProgress> progressOf(String runId) {
    return Optional.ofNullable(progress.get(runId));
  }
}

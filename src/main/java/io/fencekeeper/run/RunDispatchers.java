package io.fencekeeper.run;

import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;

/**
 * The coordinator's children: one {@link RunDispatcher} per running run, and the latest progress
 * each reported. Not journaled: after a failover the coordinator starts them again from its
 * recovered state and they resume from {@code run_item}.
 */
final class RunDispatchers {

  private final ActorContext<RunCoordinator.Command> ctx;
  private final RunDispatcher.Dependencies deps;
  private final ActorRef<RunDispatcher.ProgressReport> progressTo;
  private final ActorRef<RunDispatcher.Finished> finishedTo;
  private final Map<String, ActorRef<ToDispatcher>> running = new HashMap<>();
  private final Map<String, RunProgress> progress = new HashMap<>();

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
    String name =
        "dispatcher-"
            + URLEncoder.encode(run.runId(), StandardCharsets.UTF_8)
            + "-"
            + run.resumes();
    running.put(
        run.runId(),
        ctx.spawn(RunDispatcher.create(run, resume, governor, deps, progressTo, finishedTo), name));
  }

  void stop(String runId) {
    ActorRef<ToDispatcher> previous = running.remove(runId);
    if (previous != null) {
      ctx.stop(previous);
    }
  }

  void tell(String runId, RunDispatcher.Command command) {
    ActorRef<ToDispatcher> dispatcher = running.get(runId);
    if (dispatcher != null) {
      dispatcher.tell(command);
    }
  }

  void tellAll(RunDispatcher.Command command) {
    running.values().forEach(d -> d.tell(command));
  }

  void reported(RunDispatcher.ProgressReport report) {
    progress.put(report.runId(), report.progress());
  }

  Optional<RunProgress> progressOf(String runId) {
    return Optional.ofNullable(progress.get(runId));
  }
}

package io.fencekeeper.run;

import io.fencekeeper.run.RunCoordinator.Command;
import io.fencekeeper.run.RunCoordinator.Filed;
import io.fencekeeper.run.RunCoordinator.LookedUp;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.javadsl.ActorContext;

/**
 * The coordinator's side of {@code run_record} ({@link EndedRuns}): ended runs are written there
 * and then forgotten by the coordinator, a command about a run it does not hold is looked up there
 * first, and a filed run's counters grow there. The runs being written are also the prune gate:
 * retention may not prune a run until it is filed. Blocking calls run on the node's blocking
 * executor; their outcome comes back to the coordinator as a message ({@link Filed}, {@link
 * LookedUp}).
 */
final class RunFiling {

  private final ActorContext<Command> ctx;
  private final RunCoordinator.Dependencies deps;
  // ended runs being written to run_record
  private final Set<String> filing = new HashSet<>();

  RunFiling(ActorContext<Command> ctx, RunCoordinator.Dependencies deps) {
    this.ctx = ctx;
    this.deps = deps;
  }

  /** Whether {@code runId} is being written to {@code run_record} now. */
  boolean isFiling(String runId) {
    return filing.contains(runId);
  }

  /** Nothing is being written. */
  boolean idle() {
    return filing.isEmpty();
  }

  /**
   * Writes the ended runs the coordinator still holds to {@code run_record}, with their counters;
   * once written, they are forgotten there ({@link RunCoordinator.RunsFiled}). Tried again every
   * second until it succeeds.
   */
  void file(RunCoordinator.State state) {
    Map<String, RunRecord> ended = new TreeMap<>();
    state
        .runs()
        .forEach(
            (id, run) -> {
              if (run.state().ended() && !filing.contains(id)) {
                ended.put(id, run);
              }
            });
    if (ended.isEmpty()) {
      return;
    }
    filing.addAll(ended.keySet());
    Map<String, RunSignals> signals = new TreeMap<>();
    ended.keySet().forEach(id -> signals.put(id, state.signalsOf(id)));
    ctx.pipeToSelf(
        CompletableFuture.supplyAsync(
            () -> {
              ended.forEach((id, run) -> deps.ended().file(run, signals.get(id)));
              return signals;
            },
            deps.blocking()),
        (written, failure) -> new Filed(failure == null ? written : signals, failure));
  }

  /**
   * A write came back: the runs it wrote that the coordinator may forget now ({@link
   * RunRules#forgettable}); none when it failed (the next tick writes them again).
   */
  List<String> written(RunCoordinator.State state, Filed filed) {
    filing.removeAll(filed.written().keySet());
    if (filed.failure() != null) {
      ctx.getLog()
          .warn("ended runs not filed, trying again: {}", RunCoordinator.summary(filed.failure()));
      return List.of();
    }
    return RunRules.forgettable(filed.written(), state);
  }

  /** Asks {@code run_record} about {@code runId}; {@code command} comes back with the answer. */
  void lookUp(Command command, String runId) {
    ctx.pipeToSelf(
        CompletableFuture.supplyAsync(() -> deps.ended().find(runId), deps.blocking()),
        (filed, failure) -> new LookedUp(command, filed, failure));
  }

  /** A filed run's counters grow in {@code run_record} (a late holder refused after its end). */
  void addSignals(String runId, RunSignals delta) {
    org.slf4j.Logger log = ctx.getLog();
    CompletableFuture.runAsync(() -> deps.ended().addSignals(runId, delta), deps.blocking())
        .whenComplete(
            (ok, failure) -> {
              if (failure != null) {
                log.warn(
                    "run {}: counters of the ended run not updated: {}", runId, failure.toString());
              }
            });
  }
}

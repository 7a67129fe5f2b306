package io.fencekeeper.run;

import io.fencekeeper.run.RunCoordinator.Command;
import io.fencekeeper.run.RunCoordinator.CountersFinal;
import io.fencekeeper.run.RunCoordinator.DispatchFailed;
import io.fencekeeper.run.RunCoordinator.Event;
import io.fencekeeper.run.RunCoordinator.ItemsCounted;
import io.fencekeeper.run.RunCoordinator.RunEnded;
import io.fencekeeper.run.RunCoordinator.State;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.persistence.typed.javadsl.EffectFactories;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;

/**
 * How a running run ends (docs/design.md, "The run's end"): counted once per item from {@code
 * run_item} ({@link RunOutcome}), its counters read to the journal's end, then its final state
 * journaled once, with the reason; a run whose dispatcher keeps failing ends FAILED. Built by
 * {@link RunCoordinator}, which wires it to its commands.
 */
final class RunEnding {

  private final EffectFactories<Event, State> effect;
  private final ActorContext<Command> ctx;
  private final Clock clock;
  private final LiveRuns live;
  private final RunFiling filing;

  RunEnding(
      EffectFactories<Event, State> effect,
      ActorContext<Command> ctx,
      Clock clock,
      LiveRuns live,
      RunFiling filing) {
    this.effect = effect;
    this.ctx = ctx;
    this.clock = clock;
    this.live = live;
    this.filing = filing;
  }

  /**
   * The run's items counted in {@code run_item}, each once: a run that is not stopping ends when
   * every item is DONE or FAILED (else its last statuses are not written yet: it is counted again
   * with the next report); a stopped run ends once its sweep closed what was open. Before it ends,
   * its counters read the journal to its end (docs/design.md, "Observability").
   */
  ReplyEffect<Event, State> onItemsCounted(State state, ItemsCounted counted) {
    RunRecord run = state.runs().get(counted.runId());
    var running = live.get(counted.runId());
    if (run == null
        || run.state() != RunState.RUNNING
        || running.isEmpty()
        || run.resumes() != counted.resumes()) {
      return effect.noReply();
    }
    LiveRun liveRun = running.get();
    if (counted.failure() != null) {
      ctx.getLog()
          .warn(
              "run {}: counting its items failed: {}",
              run.runId(),
              RunCoordinator.summary(counted.failure()));
      liveRun.countFailed();
      return effect.noReply();
    }
    var ending =
        RunOutcome.ofCount(
            run, counted.counts(), liveRun.stopping(), liveRun.progress(clock.instant()));
    if (ending.isEmpty()) {
      liveRun.countFailed(); // not every status is written yet
      return effect.noReply();
    }
    if (!liveRun.beginEnd()) {
      return effect.noReply();
    }
    RunOutcome.Ending end = ending.get();
    ctx.pipeToSelf(
        SignalProjection.catchUp(ctx.getSystem(), state.signalOffset(), ctx.getSelf())
            .toCompletableFuture()
            .orTimeout(30, TimeUnit.SECONDS),
        (ok, failure) ->
            new CountersFinal(run.runId(), end.state(), end.progress(), end.reason(), failure));
    return effect.noReply();
  }

  ReplyEffect<Event, State> onCountersFinal(State state, CountersFinal message) {
    if (message.failure() != null) {
      // the live projection still counts them; the run must not wait on the journal's reader
      ctx.getLog()
          .warn(
              "run {}: counters not read to the journal's end before it ended: {}",
              message.runId(),
              RunCoordinator.summary(message.failure()));
    }
    return end(state, message.runId(), message.state(), message.progress(), message.reason());
  }

  /**
   * A run whose dispatcher keeps failing ends FAILED with the reason, never RUNNING with nobody.
   */
  ReplyEffect<Event, State> onDispatchFailed(State state, DispatchFailed failed) {
    RunRecord run = state.runs().get(failed.runId());
    var running = live.get(failed.runId());
    if (run == null || running.isEmpty() || !running.get().beginEnd()) {
      return effect.noReply();
    }
    ctx.getLog().error("run {}: {}", run.runId(), failed.reason());
    return end(
        state,
        run.runId(),
        RunState.FAILED,
        running.get().progress(clock.instant()),
        failed.reason());
  }

  private ReplyEffect<Event, State> end(
      State state, String runId, RunState end, RunProgress progress, String reason) {
    RunRecord run = state.runs().get(runId);
    if (run == null || run.state() != RunState.RUNNING) {
      return effect.noReply();
    }
    return effect
        .persist(new RunEnded(runId, end, progress, reason, clock.instant()))
        .thenRun(
            s -> {
              ctx.getLog().info("run {} ended {}: {} ({})", runId, end, progress.counts(), reason);
              live.ended(runId);
              filing.file(s);
            })
        .thenNoReply();
  }
}

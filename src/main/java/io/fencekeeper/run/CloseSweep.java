package io.fencekeeper.run;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * Closes what is still open when a run stops (deadline, cancel, too many failures): pages through
 * the run's scope and closes every item the dispatcher had not seen settled. Closing bumps the
 * item's token, so a worker still holding it can no longer commit. Each answer goes to the
 * dispatcher; an item that could not be closed is tried again, because a run must never report as
 * closed an item that a worker can still complete.
 */
final class CloseSweep extends AbstractBehavior<CloseSweep.Command> {

  /** Items closed at once: bounded, so a million-item run does not flood its shards. */
  static final int PARALLELISM = 64;

  sealed interface Command {}

  private record PageLoaded(List<RunItemStore.Row> rows, int from) implements Command {}

  private record PageFailed() implements Command {}

  private record CloseAnswered(int seq, ItemId itemId, WorkItem.Reply reply, String error)
      implements Command {}

  private record Retry() implements Command {}

  static Behavior<Command> create(
      RunRecord run,
      byte[] statusAtStop,
      String reason,
      RunDispatcher.Dependencies deps,
      ActorRef<RunDispatcher.Command> dispatcher) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new CloseSweep(ctx, timers, run, statusAtStop, reason, deps, dispatcher)));
  }

  private final TimerScheduler<Command> timers;
  private final RunRecord run;
  private final byte[] statusAtStop;
  private final String reason;
  private final RunDispatcher.Dependencies deps;
  private final ActorRef<RunDispatcher.Command> dispatcher;
  private int nextPage;
  private int inFlight;
  private boolean loading;
  private boolean backingOff;

  private CloseSweep(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      RunRecord run,
      byte[] statusAtStop,
      String reason,
      RunDispatcher.Dependencies deps,
      ActorRef<RunDispatcher.Command> dispatcher) {
    super(ctx);
    this.timers = timers;
    this.run = run;
    this.statusAtStop = statusAtStop;
    this.reason = reason;
    this.deps = deps;
    this.dispatcher = dispatcher;
    loadPage();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(PageLoaded.class, this::onPageLoaded)
        .onMessage(PageFailed.class, this::onPageFailed)
        .onMessage(CloseAnswered.class, this::onCloseAnswered)
        .onMessage(Retry.class, this::onRetry)
        .build();
  }

  private void loadPage() {
    if (loading || inFlight > 0 || timers.isTimerActive("retry")) {
      return;
    }
    if (backingOff) {
      // a shard that did not answer gets a moment before its items are asked again
      backingOff = false;
      timers.startSingleTimer("retry", new Retry(), Duration.ofSeconds(1));
      return;
    }
    if (nextPage >= statusAtStop.length) {
      dispatcher.tell(new RunDispatcher.SweepFinished());
      return;
    }
    loading = true;
    int from = nextPage;
    ActorRef<Command> self = getContext().getSelf();
    CompletableFuture.supplyAsync(
            () -> deps.store().page(run.scopeId(), from, PARALLELISM), deps.blocking())
        .whenComplete(
            (rows, failure) ->
                self.tell(failure == null ? new PageLoaded(rows, from) : new PageFailed()));
  }

  private Behavior<Command> onPageLoaded(PageLoaded page) {
    loading = false;
    nextPage = page.rows().isEmpty() ? statusAtStop.length : page.from() + page.rows().size();
    ActorRef<Command> self = getContext().getSelf();
    for (RunItemStore.Row row : page.rows()) {
      byte s = statusAtStop[row.seq()];
      if (s == StatusBoard.DONE || s == StatusBoard.FAILED || s == StatusBoard.CLOSED) {
        continue;
      }
      inFlight++;
      ItemId itemId = run.itemId(row.accountId(), row.cursor());
      deps.items()
          .close(itemId, reason)
          .whenComplete(
              (reply, failure) ->
                  self.tell(
                      new CloseAnswered(
                          row.seq(), itemId, reply, failure == null ? null : failure.toString())));
    }
    loadPage();
    return this;
  }

  private Behavior<Command> onPageFailed(PageFailed failed) {
    loading = false;
    getContext().getLog().warn("run {}: reading items to close failed, retrying", run.runId());
    backingOff = true;
    loadPage();
    return this;
  }

  private Behavior<Command> onCloseAnswered(CloseAnswered answer) {
    inFlight--;
    if (answer.reply() instanceof WorkItem.Accepted accepted) {
      dispatcher.tell(new RunDispatcher.ItemSettledBySweep(answer.seq(), accepted.item().status()));
    } else {
      getContext()
          .getLog()
          .warn(
              "run {}: closing item {} failed, trying again: {}",
              run.runId(),
              answer.itemId(),
              answer.error() != null ? answer.error() : answer.reply());
      nextPage = Math.min(nextPage, answer.seq());
      backingOff = true;
    }
    loadPage();
    return this;
  }

  private Behavior<Command> onRetry(Retry retry) {
    loadPage();
    return this;
  }
}

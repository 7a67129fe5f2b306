package io.fencekeeper.run;

import io.fencekeeper.dispatch.ScopeRows;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * Closes what is still open when a run stops (deadline, cancel, too many failures): pages through
 * the run's scope, skipping the items {@code run_item} already shows DONE, FAILED or CLOSED, and
 * closes every other item. Closing bumps the item's token, so a worker still holding it can no
 * longer commit. Each item's answer (DONE, FAILED, QUARANTINED or CLOSED) is written to {@code
 * run_item}, where the run's final count is read from; an item that could not be closed is tried
 * again, because a run must never report as closed an item that a worker can still complete. A
 * child of the coordinator; a coordinator that moves starts it again for a run still stopping.
 */
final class CloseSweep extends AbstractBehavior<CloseSweep.Command> {

  /** Items closed at once: bounded, so a million-item run does not flood its shards. */
  static final int PARALLELISM = 64;

  sealed interface Command {}

  private record PageLoaded(List<ScopeRows.Row> rows) implements Command {}

  private record PageFailed(String error) implements Command {}

  private record CloseAnswered(int seq, ItemId itemId, WorkItem.Reply reply, String error)
      implements Command {}

  private record Written(boolean ok) implements Command {}

  private record Retry() implements Command {}

  /** What the sweep needs: the scope's rows, the items, and a thread for the rows' SQL. */
  record Dependencies(RunItemStore store, ItemGateway items, Executor blocking) {}

  static Behavior<Command> create(
      RunRecord run, String reason, Dependencies deps, ActorRef<RunCoordinator.Command> finished) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> new CloseSweep(ctx, timers, run, reason, deps, finished)));
  }

  private final TimerScheduler<Command> timers;
  private final RunRecord run;
  private final String reason;
  private final Dependencies deps;
  private final ActorRef<RunCoordinator.Command> finished;
  private final List<ScopeRows.StatusWrite> answers = new ArrayList<>();
  private int nextSeq;
  private int pageFrom;
  private int inFlight;
  private int retryFrom = Integer.MAX_VALUE;

  private CloseSweep(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      RunRecord run,
      String reason,
      Dependencies deps,
      ActorRef<RunCoordinator.Command> finished) {
    super(ctx);
    this.timers = timers;
    this.run = run;
    this.reason = reason;
    this.deps = deps;
    this.finished = finished;
    loadPage();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(PageLoaded.class, this::onPageLoaded)
        .onMessage(PageFailed.class, this::onPageFailed)
        .onMessage(CloseAnswered.class, this::onCloseAnswered)
        .onMessage(Written.class, this::onWritten)
        .onMessage(Retry.class, r -> loadPage())
        .build();
  }

  private Behavior<Command> loadPage() {
    int from = nextSeq;
    pageFrom = from;
    ActorRef<Command> self = getContext().getSelf();
    CompletableFuture.supplyAsync(
            () -> deps.store().pageOpen(run.scopeId(), from, PARALLELISM), deps.blocking())
        .whenComplete(
            (rows, failure) ->
                self.tell(
                    failure == null ? new PageLoaded(rows) : new PageFailed(failure.toString())));
    return this;
  }

  private Behavior<Command> onPageLoaded(PageLoaded page) {
    if (page.rows().isEmpty()) {
      finished.tell(new RunCoordinator.SweepFinished(run.runId(), run.resumes()));
      return Behaviors.stopped();
    }
    nextSeq = page.rows().get(page.rows().size() - 1).seq() + 1;
    ActorRef<Command> self = getContext().getSelf();
    for (ScopeRows.Row row : page.rows()) {
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
    return this;
  }

  private Behavior<Command> onPageFailed(PageFailed failed) {
    getContext()
        .getLog()
        .warn("run {}: reading items to close failed, retrying: {}", run.runId(), failed.error());
    timers.startSingleTimer(new Retry(), Duration.ofSeconds(1));
    return this;
  }

  private Behavior<Command> onCloseAnswered(CloseAnswered answer) {
    inFlight--;
    if (answer.reply() instanceof WorkItem.Accepted accepted) {
      answers.add(new ScopeRows.StatusWrite(answer.seq(), statusOf(accepted.item().status())));
    } else {
      getContext()
          .getLog()
          .warn(
              "run {}: closing item {} failed, trying again: {}",
              run.runId(),
              answer.itemId(),
              answer.error() != null ? answer.error() : answer.reply());
      retryFrom = Math.min(retryFrom, answer.seq());
    }
    if (inFlight == 0) {
      List<ScopeRows.StatusWrite> batch = List.copyOf(answers);
      answers.clear();
      ActorRef<Command> self = getContext().getSelf();
      CompletableFuture.runAsync(
              () -> deps.store().markStatuses(run.scopeId(), batch), deps.blocking())
          .whenComplete((ok, failure) -> self.tell(new Written(failure == null)));
    }
    return this;
  }

  /**
   * The page's answers are in {@code run_item}: the next page, or this one again after a failure.
   */
  private Behavior<Command> onWritten(Written written) {
    if (!written.ok() || retryFrom != Integer.MAX_VALUE) {
      // a shard that did not answer (or a write that failed) gets a moment before it is asked again
      nextSeq = written.ok() ? retryFrom : pageFrom;
      retryFrom = Integer.MAX_VALUE;
      timers.startSingleTimer(new Retry(), Duration.ofSeconds(1));
      return this;
    }
    return loadPage();
  }

  /** What {@code run_item} keeps of an item's answer to Close. */
  static short statusOf(WorkItem.Status status) {
    return switch (status) {
      case DONE -> ScopeRows.DONE;
      case FAILED -> ScopeRows.FAILED;
      case QUARANTINED -> ScopeRows.QUARANTINED;
      default -> ScopeRows.CLOSED;
    };
  }
}

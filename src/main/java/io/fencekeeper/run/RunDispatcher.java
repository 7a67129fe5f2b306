package io.fencekeeper.run;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.provider.budget.RunShare;
import io.fencekeeper.run.governor.GovernorPolicy;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.governor.RunGovernor;
import io.fencekeeper.worker.AttemptResult;
import io.fencekeeper.worker.WorkProtocol;
import io.fencekeeper.worker.WorkProtocol.PoolLeaving;
import io.fencekeeper.worker.WorkProtocol.RequestWork;
import io.fencekeeper.worker.WorkProtocol.Settled;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import io.fencekeeper.worker.WorkProtocol.WorkBatch;
import io.fencekeeper.worker.WorkProtocol.WorkOffer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Hands out the items of one running run to the worker pools that ask for work ({@link
 * WorkProtocol}), learns how each attempt ended, and ends the run. It wires its parts: the {@link
 * StatusBoard} (one byte per item), the {@link WorkQueue} (what is in memory), the {@link
 * RunGovernor} (the cap on items in flight), the {@link ProgressMeter}, the {@link CloseSweep} that
 * fences off what is open when the run stops, and {@link RunOutcome} for the final state. Item
 * identities are paged from {@code run_item}, never held all at once.
 */
public final class RunDispatcher extends AbstractBehavior<ToDispatcher> {

  static final int PAGE = 1000;
  static final int LOW_WATER = 500;

  /**
   * How long a node whose item did not answer a claim gets no more of its items, unless the failure
   * detector decides first: about its acceptable heartbeat pause.
   */
  static final Duration SUSPECT_FOR = Duration.ofSeconds(5);

  /** The dispatcher's own messages; pools speak {@link WorkProtocol}. */
  public sealed interface Command extends ToDispatcher {}

  /**
   * What the journal says happened to this run's items since the last report (from the
   * coordinator's projection): the governor's stale and throttling signals.
   */
  public record SignalsSeen(RunSignals delta) implements Command {}

  /** New governor limits from the coordinator ({@code PUT /api/governor}). */
  public record ChangeGovernor(GovernorSettings settings) implements Command {}

  /** From the coordinator: stop dispatching and close what is open. */
  public record Stop(String reason, boolean cancel) implements Command {}

  record Tick() implements Command {}

  record PageLoaded(List<RunItemStore.Row> rows, int from) implements Command {}

  record PageFailed(String error) implements Command {}

  record Reopened(WorkQueue.Ref ref, WorkItem.Reply reply) implements Command {}

  /** A quarantined item's answer to the periodic look-up; null when it did not answer. */
  record QuarantineLookedUp(WorkQueue.Ref ref, WorkItem.Reply reply) implements Command {}

  /** From the close sweep: what an item answered to Close. */
  record ItemSettledBySweep(int seq, WorkItem.Status status) implements Command {}

  record SweepFinished() implements Command {}

  /** The run's share of its provider's budget, from the budget keeper. */
  record ShareGranted(BudgetKeeper.Share share) implements Command {}

  /** Sent to the coordinator at every tick. */
  public record ProgressReport(String runId, RunProgress progress) {}

  /** Sent to the coordinator once, when the run has ended. */
  public record Finished(String runId, RunState state, RunProgress progress, String reason) {}

  /** What the dispatcher needs from the node; {@code budgets}: the provider budget keeper. */
  public record Dependencies(
      Clock clock,
      RunItemStore store,
      ItemGateway items,
      ItemShards shards,
      Executor blocking,
      Duration lease,
      Duration offerGrace,
      GovernorSettings governor,
      Optional<ActorRef<BudgetKeeper.Command>> budgets) {

    /** Without provider budgets: the governor alone caps the run. */
    public Dependencies(
        Clock clock,
        RunItemStore store,
        ItemGateway items,
        ItemShards shards,
        Executor blocking,
        Duration lease,
        Duration offerGrace,
        GovernorSettings governor) {
      this(clock, store, items, shards, blocking, lease, offerGrace, governor, Optional.empty());
    }
  }

  public static Behavior<ToDispatcher> create(
      RunRecord run,
      boolean resume,
      GovernorSettings governor,
      Dependencies deps,
      ActorRef<ProgressReport> progressTo,
      ActorRef<Finished> finishedTo) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new RunDispatcher(
                        ctx, timers, run, resume, governor, deps, progressTo, finishedTo)));
  }

  private final TimerScheduler<ToDispatcher> timers;
  private final RunRecord run;
  private final boolean resume;
  private final Dependencies deps;
  private final ActorRef<ProgressReport> progressTo;
  private final ActorRef<Finished> finishedTo;
  private final Instant startedAt;

  private final StatusBoard board;
  private final WorkQueue queue;
  private final QuarantinedItems quarantined;
  private final RunGovernor governor;
  private final RunShare share;
  private final ProgressMeter meter = new ProgressMeter();
  private final ArrayDeque<RequestWork> demand = new ArrayDeque<>();
  private final LeavingPools leavingPools;

  private int nextLoad;
  private boolean loading;

  private final Address self;
  private Stop stopping;
  private boolean finished;
  private boolean registered = true;

  private RunDispatcher(
      ActorContext<ToDispatcher> ctx,
      TimerScheduler<ToDispatcher> timers,
      RunRecord run,
      boolean resume,
      GovernorSettings governorSettings,
      Dependencies deps,
      ActorRef<ProgressReport> progressTo,
      ActorRef<Finished> finishedTo) {
    super(ctx);
    this.timers = timers;
    this.run = run;
    this.resume = resume;
    this.deps = deps;
    this.progressTo = progressTo;
    this.finishedTo = finishedTo;
    this.startedAt = deps.clock().instant();
    this.board = new StatusBoard(Math.toIntExact(run.itemCount()));
    this.queue = new WorkQueue(board);
    this.quarantined = new QuarantinedItems(board);
    this.self = Cluster.get(ctx.getSystem()).selfMember().address();
    this.leavingPools = new LeavingPools(Cluster.get(ctx.getSystem()));
    this.governor = new RunGovernor(governorSettings, startedAt);
    this.share =
        new RunShare(
            run.request().providerName(),
            run.runId(),
            deps.budgets(),
            ctx.messageAdapter(BudgetKeeper.Share.class, ShareGranted::new));
    share.report(governor.cap(), false, System.nanoTime());
    var receptionist = ctx.getSystem().receptionist();
    receptionist.tell(Receptionist.register(WorkProtocol.SERVICE_KEY, ctx.getSelf()));
    receptionist.tell(Receptionist.register(WorkProtocol.serviceKeyOf(run.runId()), ctx.getSelf()));
    timers.startTimerWithFixedDelay(new Tick(), Duration.ofMillis(200));
    logDecision(governor.decision());
    loadMore();
  }

  @Override
  public Receive<ToDispatcher> createReceive() {
    return newReceiveBuilder()
        .onMessage(RequestWork.class, this::onRequestWork)
        .onMessage(Settled.class, this::onSettled)
        .onMessage(PoolLeaving.class, this::onPoolLeaving)
        .onMessage(PageLoaded.class, this::onPageLoaded)
        .onMessage(PageFailed.class, this::onPageFailed)
        .onMessage(Reopened.class, this::onReopened)
        .onMessage(QuarantineLookedUp.class, this::onQuarantineLookedUp)
        .onMessage(Tick.class, this::onTick)
        .onMessage(ChangeGovernor.class, this::onChangeGovernor)
        .onMessage(SignalsSeen.class, this::onSignalsSeen)
        .onMessage(Stop.class, this::onStop)
        .onMessage(ItemSettledBySweep.class, this::onItemSettledBySweep)
        .onMessage(SweepFinished.class, this::onSweepFinished)
        .onMessage(
            ShareGranted.class,
            granted -> {
              share.granted(granted.share());
              serveDemand();
              return this;
            })
        .build();
  }

  // --- handing out work --------------------------------------------------------------------------

  private Behavior<ToDispatcher> onRequestWork(RequestWork request) {
    if (stopping != null) {
      request.replyTo().tell(batch(List.of(), true));
      return this;
    }
    if (leavingPools.contains(request.replyTo(), memberOf(request.replyTo()))) {
      request.replyTo().tell(batch(List.of(), false));
      return this;
    }
    demand.add(request);
    serveDemand();
    if (request.answerNow() && demand.remove(request)) {
      request.replyTo().tell(batch(List.of(), false));
    }
    return this;
  }

  /**
   * Its node shuts down: its open request is void. What it still runs reports as usual; what it was
   * offered after it said so comes back at once, unclaimed.
   */
  private Behavior<ToDispatcher> onPoolLeaving(PoolLeaving leaving) {
    leavingPools.add(leaving.pool());
    demand.removeIf(request -> request.replyTo().equals(leaving.pool()));
    return this;
  }

  private void serveDemand() {
    Instant now = deps.clock().instant();
    if (!now.isBefore(run.deadline())) {
      return; // past the deadline nothing new starts; the coordinator's stop follows
    }
    queue.releaseDue(now);
    // the governor's cap, within the run's share of its provider's budget; a worker waiting on an
    // item whose node does not answer is not busy with the provider, so it does not count against
    // the cap and the run goes on at the pace the healthy nodes allow
    int cap = share.capOf(governor.cap());
    Predicate<WorkQueue.Ref> reachable = ref -> deps.shards().reachable(ref.itemId());
    while (!demand.isEmpty() && queue.hasReady() && queue.inFlight(reachable) < cap) {
      RequestWork request = demand.poll();
      if (leavingPools.contains(request.replyTo(), memberOf(request.replyTo()))) {
        continue; // its member is leaving the cluster: no answer, the pool is going away
      }
      int allowed = Math.min(request.max(), cap - queue.inFlight(reachable));
      List<WorkOffer> offers =
          queue.take(allowed, now, memberOf(request.replyTo()), reachable).stream()
              .map(
                  ref ->
                      new WorkOffer(
                          ref.seq(),
                          ref.itemId(),
                          run.request().maxAttempts(),
                          deps.lease(),
                          run.request().provider()))
              .toList();
      if (offers.isEmpty()) {
        demand.addFirst(request);
        break;
      }
      request.replyTo().tell(batch(offers, false));
    }
    loadMore();
  }

  /** The node of a pool; a pool on this node has a local address. */
  private Address memberOf(ActorRef<?> pool) {
    Address address = pool.path().address();
    return address.hasLocalScope() ? self : address;
  }

  private WorkBatch batch(List<WorkOffer> offers, boolean runFinished) {
    return new WorkBatch(run.runId(), offers, runFinished, getContext().getSelf());
  }

  // --- paging the scope in, and reopening on resume ----------------------------------------------

  private void loadMore() {
    if (loading
        || stopping != null
        || nextLoad >= board.size()
        || queue.readyCount() >= LOW_WATER) {
      return;
    }
    loading = true;
    int from = nextLoad;
    ActorRef<ToDispatcher> self = getContext().getSelf();
    CompletableFuture.supplyAsync(
            () -> deps.store().page(run.scopeId(), from, PAGE), deps.blocking())
        .whenComplete(
            (rows, failure) ->
                self.tell(
                    failure == null
                        ? new PageLoaded(rows, from)
                        : new PageFailed(failure.toString())));
  }

  private Behavior<ToDispatcher> onPageLoaded(PageLoaded page) {
    loading = false;
    if (stopping != null) {
      return this;
    }
    for (RunItemStore.Row row : page.rows()) {
      nextLoad = Math.max(nextLoad, row.seq() + 1);
      if (board.get(row.seq()) != StatusBoard.READY) {
        continue;
      }
      WorkQueue.Ref ref = new WorkQueue.Ref(row.seq(), run.itemId(row.accountId(), row.cursor()));
      if (row.status() == RunItemStore.DONE) {
        settle(row.seq(), StatusBoard.DONE);
      } else if (resume || row.status() == RunItemStore.CLOSED) {
        reopen(ref);
      } else if (row.status() == RunItemStore.FAILED) {
        settle(row.seq(), StatusBoard.FAILED);
      } else {
        queue.ready(ref);
      }
    }
    if (page.rows().isEmpty()) {
      nextLoad = board.size();
    }
    serveDemand();
    finishIfAllSettled();
    return this;
  }

  /** A resumed run reopens what the deadline closed; DONE items are never redone. */
  private void reopen(WorkQueue.Ref ref) {
    board.mark(ref.seq(), StatusBoard.WAITING);
    ActorRef<ToDispatcher> self = getContext().getSelf();
    deps.items()
        .reopen(ref.itemId())
        .whenComplete((reply, failure) -> self.tell(new Reopened(ref, reply)));
  }

  private Behavior<ToDispatcher> onPageFailed(PageFailed failure) {
    loading = false;
    getContext().getLog().warn("run {}: loading items failed, retrying: {}", run.runId(), failure);
    return this;
  }

  private Behavior<ToDispatcher> onReopened(Reopened reopened) {
    int seq = reopened.ref().seq();
    if (reopened.reply() instanceof WorkItem.Accepted a
        && a.item().status() == WorkItem.Status.DONE) {
      settle(seq, StatusBoard.DONE);
    } else if (stopping == null && board.get(seq) == StatusBoard.WAITING) {
      queue.ready(reopened.ref()); // on no answer too: the claim tells the truth
    }
    serveDemand();
    finishIfAllSettled();
    return this;
  }

  // --- learning how attempts ended ---------------------------------------------------------------

  private Behavior<ToDispatcher> onSettled(Settled settled) {
    if (finished) {
      return this;
    }
    int seq = settled.seq();
    var offer = queue.settle(seq);
    AttemptResult result = settled.result();
    Instant now = deps.clock().instant();
    if (result instanceof AttemptResult.Done) {
      settle(seq, StatusBoard.DONE);
    } else if (result instanceof AttemptResult.Failed) {
      settle(seq, StatusBoard.FAILED);
    } else if (result instanceof AttemptResult.Closed) {
      settle(seq, StatusBoard.CLOSED);
    } else if (result instanceof AttemptResult.Quarantined q) {
      offer.ifPresent(ref -> quarantine(ref, q.reason()));
    } else if (result instanceof AttemptResult.RetryAt r) {
      offer.ifPresent(ref -> parkOrRelease(ref, r.at()));
    } else if (result instanceof AttemptResult.Held h) {
      // the expiry by the item's host's clock: one ahead of this one must not park the item for
      // longer than a lease (a claim then answers again)
      Instant leaseAtMost = now.plus(deps.lease());
      offer.ifPresent(
          ref -> parkOrRelease(ref, h.until().isAfter(leaseAtMost) ? leaseAtMost : h.until()));
    } else if (result instanceof AttemptResult.Unanswered) {
      // its node did not answer: its other items wait until it does or the failure detector
      // decides, and this one with them (the worker gave its claim back); when the item's node is
      // not known (a shard allocated since the last look), only this item waits a while
      offer.ifPresent(
          ref -> {
            if (suspect(ref.itemId())) {
              parkOrRelease(ref, now);
            } else {
              parkOrRelease(ref, now.plus(SUSPECT_FOR));
            }
          });
    } else {
      // lost or no answer: whoever holds it now reports, or its lease runs out
      offer.ifPresent(ref -> parkOrRelease(ref, now.plus(deps.lease())));
    }
    if (stopping == null && board.failed() > run.request().maxFailedItems()) {
      beginStop(
          new Stop(
              board.failed()
                  + " items failed, more than maxFailedItems "
                  + run.request().maxFailedItems(),
              false));
      return this;
    }
    serveDemand();
    finishIfAllSettled();
    return this;
  }

  /** An item that is still open waits until {@code until}; once stopping, the sweep takes it. */
  private void parkOrRelease(WorkQueue.Ref ref, Instant until) {
    if (stopping == null) {
      queue.park(ref, until);
    } else {
      board.mark(ref.seq(), StatusBoard.READY);
    }
  }

  /**
   * The item's last holders vanished (a poison item): out of dispatch until an operator retries it.
   * It is not settled, so the run does not end without it: at the deadline it counts as not done.
   */
  private void quarantine(WorkQueue.Ref ref, String reason) {
    if (!board.isOpen(ref.seq()) || !quarantined.add(ref)) {
      return;
    }
    getContext()
        .getLog()
        .warn("run {}: item {} quarantined: {}", run.runId(), ref.itemId().value(), reason);
  }

  /** Asks the quarantined items every few seconds whether an operator retried them. */
  private void lookUpQuarantined(Instant now) {
    ActorRef<ToDispatcher> self = getContext().getSelf();
    for (WorkQueue.Ref ref : quarantined.dueForLookup(now)) {
      deps.items()
          .get(ref.itemId())
          .whenComplete((reply, failure) -> self.tell(new QuarantineLookedUp(ref, reply)));
    }
  }

  private Behavior<ToDispatcher> onQuarantineLookedUp(QuarantineLookedUp answer) {
    quarantined.answered();
    int seq = answer.ref().seq();
    if (finished
        || stopping != null
        || board.get(seq) != StatusBoard.QUARANTINED
        || !(answer.reply() instanceof WorkItem.Accepted a)
        || a.item().status() == WorkItem.Status.QUARANTINED) {
      return this; // still quarantined, no answer, or the close sweep decides now
    }
    // retried by an operator: hand it out again, and the claim tells the truth
    quarantined.remove(seq);
    queue.ready(answer.ref());
    serveDemand();
    return this;
  }

  private void settle(int seq, byte terminal) {
    if (board.settle(seq, terminal)) {
      queue.settle(seq);
      quarantined.remove(seq);
    }
  }

  private void finishIfAllSettled() {
    if (finished || stopping != null || !board.allSettled()) {
      return;
    }
    finish(
        RunOutcome.finalState(
            board.size(), board.done(), board.failed(), run.request().maxFailedItems(), false),
        board.failed() == 0 ? "every item is done" : board.failed() + " items failed");
  }

  // --- the periodic tick: offers that never came back, retries due, governor, progress ----------

  /**
   * A node the failure detector calls unreachable gets no more work and its pools' offers are
   * handed out again at once: a claim answers with the lease the dead worker holds, and the item is
   * taken over when that lease expires, not a grace later. Items put aside because their shard was
   * on an unreachable node queue again once it answers again or has left the cluster.
   */
  private void followUnreachableNodes(Instant now) {
    int lost = queue.expireOffersTo(member -> deps.shards().isUnreachable(member));
    if (lost > 0) {
      getContext()
          .getLog()
          .warn(
              "run {}: {} items offered to workers on unreachable nodes handed out again",
              run.runId(),
              lost);
    }
    queue.releaseReachable(ref -> deps.shards().reachable(ref.itemId()));
  }

  /**
   * Suspects the item's node for a while: its items wait until it answers or the failure detector
   * decides. False when the item's node is not known or is this one.
   */
  private boolean suspect(ItemId item) {
    Optional<Address> suspected = deps.shards().suspect(item, self, SUSPECT_FOR);
    suspected.ifPresent(
        member ->
            getContext()
                .getLog()
                .warn(
                    "run {}: a claim on {} was not answered: no work on items of {} for {}"
                        + " unless the failure detector decides first",
                    run.runId(),
                    item.value(),
                    member,
                    SUSPECT_FOR));
    return suspected.isPresent();
  }

  private Behavior<ToDispatcher> onTick(Tick tick) {
    if (finished) {
      return this;
    }
    Instant now = deps.clock().instant();
    // an offer outlives its lease only when the pool that took it is gone or stuck
    queue.expireOffersBefore(now.minus(deps.lease()).minus(deps.offerGrace()));
    followUnreachableNodes(now);
    meter.sample(System.nanoTime(), board.done());
    flushStatuses();
    if (stopping == null) {
      RunProgress p = progress();
      governor
          .decide(
              now,
              run.deadline(),
              p.counts().pending() + p.counts().leased(),
              p.itemsPerSecond(),
              p.backlogAgeSeconds())
          .ifPresent(this::logDecision);
      share.report(
          (int) Math.min(governor.cap(), p.counts().pending() + p.counts().leased()),
          governor.decision().mode() == GovernorPolicy.Mode.BURST,
          System.nanoTime());
    }
    progressTo.tell(new ProgressReport(run.runId(), progress()));
    if (stopping == null) {
      lookUpQuarantined(now);
      serveDemand();
      finishIfAllSettled();
    }
    return this;
  }

  /** Every decision worth logging is logged once, with its reason, and kept in the run view. */
  private void logDecision(GovernorPolicy.Decision d) {
    getContext()
        .getLog()
        .info("run {}: governor {} cap {}: {}", run.runId(), d.mode(), d.cap(), d.reason());
  }

  /**
   * The same truth as the run view's counters: stale rejections, takeovers, throttled answers and
   * quarantines.
   */
  private Behavior<ToDispatcher> onSignalsSeen(SignalsSeen seen) {
    governor.throttled(seen.delta().throttledAnswers());
    if (seen.delta().quarantines() > 0) {
      governor.quarantined(deps.clock().instant());
    }
    governor.stale(seen.delta().staleRejections() + seen.delta().takeovers());
    return this;
  }

  private Behavior<ToDispatcher> onChangeGovernor(ChangeGovernor changed) {
    logDecision(governor.change(changed.settings(), deps.clock().instant()));
    serveDemand();
    return this;
  }

  /** Writes terminal statuses to {@code run_item}: only a cache, a claim corrects what it lost. */
  private void flushStatuses() {
    List<RunItemStore.StatusWrite> batch = board.drainWrites();
    if (batch.isEmpty()) {
      return;
    }
    // the context belongs to the actor's thread; the logger may be used from any
    org.slf4j.Logger log = getContext().getLog();
    CompletableFuture.runAsync(
            () -> deps.store().markStatuses(run.scopeId(), batch), deps.blocking())
        .whenComplete(
            (ok, failure) -> {
              if (failure != null) {
                log.warn("run {}: status cache write failed: {}", run.runId(), failure.toString());
              }
            });
  }

  RunProgress progress() {
    long leased = queue.inFlight();
    long pending =
        board.size()
            - board.done()
            - board.failed()
            - board.closed()
            - board.quarantined()
            - leased;
    Instant now = deps.clock().instant();
    return new RunProgress(
        new Counts(
            board.size(),
            pending,
            leased,
            board.done(),
            board.failed(),
            board.closed(),
            board.quarantined()),
        backlogAgeSeconds(now),
        meter.itemsPerSecond(),
        meter.projectedFinish(now, pending + leased),
        governor.view());
  }

  /** The age of the oldest item that is neither done nor leased, as far as memory shows it. */
  private double backlogAgeSeconds(Instant now) {
    if (stopping != null) {
      return 0;
    }
    if (queue.hasReady() || nextLoad < board.size()) {
      return Duration.between(startedAt, now).toMillis() / 1000.0;
    }
    return queue
        .overdueSince(now)
        .map(since -> Duration.between(since, now).toMillis() / 1000.0)
        .orElse(0.0);
  }

  // --- stopping: deadline, cancel, too many failures ---------------------------------------------

  private Behavior<ToDispatcher> onStop(Stop stop) {
    if (stopping == null) {
      beginStop(stop);
    }
    return this;
  }

  private void beginStop(Stop stop) {
    stopping = stop;
    getContext().getLog().info("run {}: stopping ({})", run.runId(), stop.reason());
    for (RequestWork request : demand) {
      request.replyTo().tell(batch(List.of(), true));
    }
    demand.clear();
    queue.clearWaiting();
    deregister();
    getContext()
        .spawn(
            CloseSweep.create(
                run,
                board.snapshot(),
                stop.cancel() ? "cancelled" : "deadline: " + stop.reason(),
                deps,
                getContext().getSelf().narrow()),
            "close-sweep");
  }

  private Behavior<ToDispatcher> onItemSettledBySweep(ItemSettledBySweep answer) {
    switch (answer.status()) {
      case DONE -> settle(answer.seq(), StatusBoard.DONE);
      case FAILED -> settle(answer.seq(), StatusBoard.FAILED);
      // a quarantined item stays quarantined (not done, not closed): the run shows it
      case QUARANTINED -> board.mark(answer.seq(), StatusBoard.QUARANTINED);
      default -> settle(answer.seq(), StatusBoard.CLOSED);
    }
    return this;
  }

  private Behavior<ToDispatcher> onSweepFinished(SweepFinished done) {
    finish(
        RunOutcome.finalState(
            board.size(),
            board.done(),
            board.failed(),
            run.request().maxFailedItems(),
            stopping.cancel()),
        stopping.reason());
    return this;
  }

  /**
   * Leaves the receptionist once: pools stop asking at once instead of when the actor stops. (The
   * receptionist fails on removing what it does not hold, so never twice.)
   */
  private void deregister() {
    if (registered) {
      registered = false;
      var receptionist = getContext().getSystem().receptionist();
      receptionist.tell(Receptionist.deregister(WorkProtocol.SERVICE_KEY, getContext().getSelf()));
      receptionist.tell(
          Receptionist.deregister(WorkProtocol.serviceKeyOf(run.runId()), getContext().getSelf()));
    }
  }

  private void finish(RunState state, String reason) {
    if (finished) {
      return;
    }
    finished = true;
    flushStatuses();
    deregister();
    share.leave();
    finishedTo.tell(new Finished(run.runId(), state, progress(), reason));
    stopping = stopping == null ? new Stop(reason, false) : stopping;
    timers.cancelAll();
  }
}

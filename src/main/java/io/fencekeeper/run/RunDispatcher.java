package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.worker.AttemptResult;
import io.fencekeeper.worker.GovernorPolicy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * Hands out the items of one running run to the worker pools that ask for work, and learns how each
 * attempt ended. Memory is bounded by the run's size in bytes (one status byte per item) plus what
 * is in flight: item identities are paged from the {@code run_item} table, never held all at once.
 * The WorkItem entities stay the authority: the dispatcher's view is a cache that a claim corrects.
 *
 * <p>At the deadline (or on cancel, or past {@code maxFailedItems}) it stops handing out work,
 * closes every item that is not DONE or FAILED (which bumps the token and fences off in-flight
 * workers), and reports the run's final state to the coordinator.
 */
public final class RunDispatcher extends AbstractBehavior<RunDispatcher.Command> {

  public static final ServiceKey<Command> SERVICE_KEY =
      ServiceKey.create(Command.class, "run-dispatcher");

  static final int PAGE = 1000;
  static final int LOW_WATER = 500;
  static final int CLOSE_PARALLELISM = 64;

  // status bytes, one per item
  static final byte READY = 0;
  static final byte OFFERED = 1;
  static final byte DONE = 2;
  static final byte FAILED = 3;
  static final byte CLOSED = 4;
  static final byte WAITING = 5;

  public sealed interface Command extends CborSerializable {}

  /**
   * A pool asks for up to {@code max} items; it gets exactly one {@link WorkBatch} back, held until
   * work is ready unless {@code answerNow} (the external lease API must not hang).
   */
  public record RequestWork(int max, boolean answerNow, ActorRef<WorkBatch> replyTo)
      implements Command {
    public RequestWork(int max, ActorRef<WorkBatch> replyTo) {
      this(max, false, replyTo);
    }
  }

  /** The dispatcher of one run, for callers that want that run only (claim-next). */
  public static ServiceKey<Command> serviceKeyOf(String runId) {
    return ServiceKey.create(Command.class, "run-dispatcher:" + runId);
  }

  /** A pool reports how the attempt at item {@code seq} ended, and how often it was throttled. */
  public record Settled(int seq, AttemptResult result, int throttles) implements Command {}

  /** New governor limits from the coordinator ({@code PUT /api/governor}). */
  public record GovernorChanged(GovernorPolicy.Settings settings) implements Command {}

  /** From the coordinator: stop dispatching and close what is open. */
  public record Stop(String reason, boolean cancel) implements Command {}

  record Tick() implements Command {}

  record PageLoaded(List<RunItemStore.Row> rows, int from) implements Command {}

  record PageFailed(String error) implements Command {}

  record Reopened(int seq, String itemId, WorkItem.Reply reply, String error) implements Command {}

  record CloseAnswered(int seq, WorkItem.Reply reply, String error) implements Command {}

  record ClosePageLoaded(List<RunItemStore.Row> rows, int from) implements Command {}

  /** One item handed to a pool. */
  public record WorkOffer(int seq, String itemId, int maxAttempts, Duration lease)
      implements CborSerializable {}

  /** The answer to a {@link RequestWork}; empty and {@code finished} when the run stopped. */
  public record WorkBatch(
      String runId, List<WorkOffer> offers, boolean finished, ActorRef<Command> dispatcher)
      implements CborSerializable {}

  /** Sent to the coordinator. */
  public record Report(String runId, RunProgress progress) {}

  public record Outcome(String runId, RunState state, RunProgress progress, String reason) {}

  /** What the dispatcher needs from the node. */
  public record Dependencies(
      Clock clock,
      RunItemStore store,
      ItemGateway items,
      Executor blocking,
      Duration lease,
      Duration offerGrace,
      GovernorPolicy.Settings governor) {}

  private record Ref(int seq, String itemId) {}

  private record Waiting(Instant at, Ref ref) {}

  public static Behavior<Command> create(
      RunCoordinator.RunRecord run,
      boolean resume,
      GovernorPolicy.Settings governor,
      Dependencies deps,
      ActorRef<Report> progressTo,
      ActorRef<Outcome> outcomeTo) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new RunDispatcher(
                        ctx, timers, run, resume, governor, deps, progressTo, outcomeTo)));
  }

  private final TimerScheduler<Command> timers;
  private final RunCoordinator.RunRecord run;
  private final boolean resume;
  private final Dependencies deps;
  private final ActorRef<Report> progressTo;
  private final ActorRef<Outcome> outcomeTo;

  private final byte[] status;
  private final ArrayDeque<Ref> ready = new ArrayDeque<>();
  private final PriorityQueue<Waiting> waiting =
      new PriorityQueue<>((a, b) -> a.at().compareTo(b.at()));
  private final Map<Integer, Ref> offered = new HashMap<>();
  private final Map<Integer, Instant> offeredAt = new HashMap<>();
  private final ArrayDeque<RequestWork> demand = new ArrayDeque<>();
  private final List<int[]> statusCache = new ArrayList<>();

  private int nextLoad;
  private boolean loading;
  private int reopening;
  private long done;
  private long failed;
  private long closed;
  private long staleRejections;
  private long leaseExpiries;
  private long reconciliations;
  private final Instant startedAt;
  private final ArrayDeque<long[]> rateSamples = new ArrayDeque<>();

  // the governor: the cluster-wide cap on items handed out (each is at most one provider call)
  private GovernorPolicy.Settings governorSettings;
  private GovernorPolicy.Decision decision;
  private Instant lastDecisionAt;
  private long throttledInWindow;
  private long staleInWindow;
  private long throttledAnswers;
  private final ArrayDeque<RunProgress.GovernorChange> governorChanges = new ArrayDeque<>();

  // stopping
  private Stop stopping;
  private boolean finished;
  private boolean registered = true;
  private int nextClose;
  private int closesInFlight;
  private boolean closePageLoading;

  private RunDispatcher(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      RunCoordinator.RunRecord run,
      boolean resume,
      GovernorPolicy.Settings governor,
      Dependencies deps,
      ActorRef<Report> progressTo,
      ActorRef<Outcome> outcomeTo) {
    super(ctx);
    this.governorSettings = governor;
    this.decision = GovernorPolicy.Decision.initial(governor);
    this.timers = timers;
    this.run = run;
    this.resume = resume;
    this.deps = deps;
    this.progressTo = progressTo;
    this.outcomeTo = outcomeTo;
    this.status = new byte[Math.toIntExact(run.itemCount())];
    this.startedAt = deps.clock().instant();
    ctx.getSystem().receptionist().tell(Receptionist.register(SERVICE_KEY, ctx.getSelf()));
    ctx.getSystem()
        .receptionist()
        .tell(Receptionist.register(serviceKeyOf(run.runId()), ctx.getSelf()));
    timers.startTimerWithFixedDelay(new Tick(), Duration.ofMillis(200));
    logDecision(decision);
    loadMore();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(RequestWork.class, this::onRequestWork)
        .onMessage(Settled.class, this::onSettled)
        .onMessage(PageLoaded.class, this::onPageLoaded)
        .onMessage(PageFailed.class, this::onPageFailed)
        .onMessage(Reopened.class, this::onReopened)
        .onMessage(Tick.class, this::onTick)
        .onMessage(Stop.class, this::onStop)
        .onMessage(ClosePageLoaded.class, this::onClosePageLoaded)
        .onMessage(CloseAnswered.class, this::onCloseAnswered)
        .onMessage(GovernorChanged.class, this::onGovernorChanged)
        .build();
  }

  // --- handing out work --------------------------------------------------------------------------

  private Behavior<Command> onRequestWork(RequestWork request) {
    if (stopping != null) {
      request.replyTo().tell(new WorkBatch(run.runId(), List.of(), true, getContext().getSelf()));
      return this;
    }
    demand.add(request);
    serveDemand();
    if (request.answerNow() && demand.remove(request)) {
      request.replyTo().tell(new WorkBatch(run.runId(), List.of(), false, getContext().getSelf()));
    }
    return this;
  }

  private void serveDemand() {
    if (!deps.clock().instant().isBefore(run.deadline())) {
      return; // past the deadline nothing new starts; the coordinator's stop follows
    }
    releaseDueWaiting();
    while (!demand.isEmpty() && !ready.isEmpty() && offered.size() < decision.cap()) {
      RequestWork request = demand.poll();
      int allowed = Math.min(request.max(), decision.cap() - offered.size());
      List<WorkOffer> offers = new ArrayList<>(Math.min(allowed, ready.size()));
      Instant now = deps.clock().instant();
      while (offers.size() < allowed && !ready.isEmpty()) {
        Ref ref = ready.poll();
        if (status[ref.seq()] != READY && status[ref.seq()] != WAITING) {
          continue; // settled meanwhile (a report from an older offer)
        }
        status[ref.seq()] = OFFERED;
        offered.put(ref.seq(), ref);
        offeredAt.put(ref.seq(), now);
        offers.add(
            new WorkOffer(ref.seq(), ref.itemId(), run.request().maxAttempts(), deps.lease()));
      }
      if (offers.isEmpty()) {
        demand.addFirst(request);
        break;
      }
      request.replyTo().tell(new WorkBatch(run.runId(), offers, false, getContext().getSelf()));
    }
    loadMore();
  }

  private void releaseDueWaiting() {
    Instant now = deps.clock().instant();
    while (!waiting.isEmpty() && !waiting.peek().at().isAfter(now)) {
      Ref ref = waiting.poll().ref();
      if (status[ref.seq()] == WAITING) {
        ready.add(ref);
      }
    }
  }

  // --- loading the scope -------------------------------------------------------------------------

  private void loadMore() {
    if (loading || stopping != null || nextLoad >= status.length || ready.size() >= LOW_WATER) {
      return;
    }
    loading = true;
    int from = nextLoad;
    readPage(
        from,
        PAGE,
        (rows, failure) ->
            failure == null ? new PageLoaded(rows, from) : new PageFailed(failure.toString()));
  }

  /**
   * Reads a page of the scope on the blocking executor and tells this actor what came back. The
   * answer is built off the actor's thread, so it only gets the rows or the failure.
   */
  private void readPage(
      int from, int size, BiFunction<List<RunItemStore.Row>, Throwable, Command> answer) {
    ActorRef<Command> self = getContext().getSelf();
    CompletableFuture.supplyAsync(
            () -> deps.store().page(run.scopeId(), from, size), deps.blocking())
        .whenComplete((rows, failure) -> self.tell(answer.apply(rows, failure)));
  }

  private Behavior<Command> onPageLoaded(PageLoaded page) {
    loading = false;
    if (stopping != null) {
      return this;
    }
    for (RunItemStore.Row row : page.rows()) {
      nextLoad = Math.max(nextLoad, row.seq() + 1);
      if (status[row.seq()] != READY) {
        continue;
      }
      String itemId = itemId(row).value();
      if (row.status() == RunItemStore.DONE) {
        setStatus(row.seq(), DONE);
      } else if (resume || row.status() == RunItemStore.CLOSED) {
        // a resumed run reopens what the deadline closed; DONE items are never redone
        status[row.seq()] = WAITING;
        reopening++;
        deps.items()
            .reopen(itemId(row))
            .whenComplete(
                (reply, failure) ->
                    getContext()
                        .getSelf()
                        .tell(
                            new Reopened(
                                row.seq(),
                                itemId,
                                reply,
                                failure == null ? null : failure.toString())));
      } else if (row.status() == RunItemStore.FAILED) {
        setStatus(row.seq(), FAILED);
      } else {
        ready.add(new Ref(row.seq(), itemId));
      }
    }
    if (page.rows().isEmpty()) {
      nextLoad = status.length;
    }
    serveDemand();
    checkFinished();
    return this;
  }

  private Behavior<Command> onPageFailed(PageFailed failure) {
    loading = false;
    getContext().getLog().warn("run {}: loading items failed, retrying: {}", run.runId(), failure);
    return this;
  }

  private Behavior<Command> onReopened(Reopened reopened) {
    reopening--;
    if (reopened.reply() instanceof WorkItem.Accepted a
        && a.item().status() == WorkItem.Status.DONE) {
      setStatus(reopened.seq(), DONE);
    } else if (stopping == null && status[reopened.seq()] == WAITING) {
      // on an unknown answer too: the claim tells the truth
      status[reopened.seq()] = READY;
      ready.add(new Ref(reopened.seq(), reopened.itemId()));
    }
    serveDemand();
    checkFinished();
    return this;
  }

  private ItemId itemId(RunItemStore.Row row) {
    return ItemId.of(
        run.request().job(), run.request().businessDate(), row.accountId(), row.cursor());
  }

  // --- learning how attempts ended ---------------------------------------------------------------

  private Behavior<Command> onSettled(Settled settled) {
    if (finished) {
      return this;
    }
    int seq = settled.seq();
    throttledInWindow += settled.throttles();
    throttledAnswers += settled.throttles();
    Ref ref = offered.remove(seq);
    offeredAt.remove(seq);
    AttemptResult result = settled.result();
    if (result instanceof AttemptResult.Done d) {
      if (d.afterTakeover()) {
        leaseExpiries++;
        staleInWindow++;
      }
      if (d.reconciled()) {
        reconciliations++;
      }
      setStatus(seq, DONE);
    } else if (result instanceof AttemptResult.Failed) {
      setStatus(seq, FAILED);
    } else if (result instanceof AttemptResult.Closed) {
      setStatus(seq, CLOSED);
    } else if (ref != null && stopping == null) {
      Instant now = deps.clock().instant();
      Instant at;
      if (result instanceof AttemptResult.RetryAt r) {
        at = r.at();
      } else if (result instanceof AttemptResult.Held h) {
        at = h.until();
      } else {
        if (result instanceof AttemptResult.Lost) {
          staleRejections++;
          staleInWindow++;
        }
        // lost or no answer: whoever holds it now reports, or its lease runs out
        at = now.plus(deps.lease());
      }
      status[seq] = WAITING;
      waiting.add(new Waiting(at, ref));
    } else if (ref != null) {
      status[seq] = READY; // stopping: the close sweep takes it from here
    }
    if (stopping == null && failed > run.request().maxFailedItems()) {
      beginStop(
          new Stop(
              failed + " items failed, more than maxFailedItems " + run.request().maxFailedItems(),
              false));
      return this;
    }
    serveDemand();
    checkFinished();
    return this;
  }

  private void setStatus(int seq, byte next) {
    byte previous = status[seq];
    if (previous == next) {
      return;
    }
    if (previous == DONE || (previous == FAILED && next != DONE)) {
      return; // terminal: DONE never changes, FAILED only becomes DONE via another report
    }
    status[seq] = next;
    if (next == DONE || next == FAILED || next == CLOSED) {
      offered.remove(seq);
      offeredAt.remove(seq);
    }
    if (previous == CLOSED) {
      closed--;
    }
    if (previous == FAILED) {
      failed--;
    }
    switch (next) {
      case DONE -> {
        done++;
        statusCache.add(new int[] {seq, RunItemStore.DONE});
      }
      case FAILED -> {
        failed++;
        statusCache.add(new int[] {seq, RunItemStore.FAILED});
      }
      case CLOSED -> {
        closed++;
        statusCache.add(new int[] {seq, RunItemStore.CLOSED});
      }
      default -> {}
    }
  }

  private void checkFinished() {
    if (finished || stopping != null || done + failed < status.length) {
      return;
    }
    RunState state;
    if (failed == 0) {
      state = RunState.SUCCEEDED;
    } else if (done == 0 || failed > run.request().maxFailedItems()) {
      state = RunState.FAILED;
    } else {
      state = RunState.PARTIAL;
    }
    finish(state, failed == 0 ? "every item is done" : failed + " items failed");
  }

  // --- the periodic tick: offers that never came back, retries due, progress
  // ----------------------

  private Behavior<Command> onTick(Tick tick) {
    if (finished) {
      return this;
    }
    // an offer outlives its lease only when the pool that took it is gone or stuck
    Instant expiredBefore = deps.clock().instant().minus(deps.lease()).minus(deps.offerGrace());
    Iterator<Map.Entry<Integer, Instant>> it = offeredAt.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Integer, Instant> entry = it.next();
      if (entry.getValue().isBefore(expiredBefore)) {
        // the pool that took it never answered (node died): the claim will tell the truth
        it.remove();
        Ref ref = offered.remove(entry.getKey());
        if (ref != null && status[ref.seq()] == OFFERED) {
          status[ref.seq()] = READY;
          ready.add(ref);
        }
      }
    }
    long nowNanos = System.nanoTime();
    rateSamples.add(new long[] {nowNanos, done});
    while (rateSamples.size() > 2 && nowNanos - rateSamples.peekFirst()[0] > 10_000_000_000L) {
      rateSamples.pollFirst();
    }
    flushStatusCache();
    govern();
    progressTo.tell(new Report(run.runId(), progress()));
    if (stopping == null) {
      serveDemand();
      checkFinished();
    }
    return this;
  }

  // --- the governor ------------------------------------------------------------------------------

  private void govern() {
    Instant now = deps.clock().instant();
    if (stopping != null
        || (lastDecisionAt != null && now.isBefore(lastDecisionAt.plusSeconds(1)))) {
      return;
    }
    lastDecisionAt = now;
    RunProgress p = progress();
    GovernorPolicy.Decision next =
        GovernorPolicy.decide(
            governorSettings,
            decision,
            new GovernorPolicy.Signals(
                now,
                run.deadline(),
                p.counts().pending() + p.counts().leased(),
                p.itemsPerSecond(),
                p.backlogAgeSeconds(),
                throttledInWindow,
                staleInWindow));
    throttledInWindow = 0;
    staleInWindow = 0;
    boolean changed =
        next.mode() != decision.mode()
            || (next.cap() != decision.cap() && next.mode() != GovernorPolicy.Mode.NORMAL);
    decision = next;
    if (changed) {
      logDecision(next);
    }
    serveDemand();
  }

  /** Every decision that changes the mode (or moves the cap outside NORMAL) is logged once. */
  private void logDecision(GovernorPolicy.Decision d) {
    getContext()
        .getLog()
        .info("run {}: governor {} cap {}: {}", run.runId(), d.mode(), d.cap(), d.reason());
    governorChanges.add(
        new RunProgress.GovernorChange(deps.clock().instant(), d.mode(), d.cap(), d.reason()));
    while (governorChanges.size() > 50) {
      governorChanges.pollFirst();
    }
  }

  private Behavior<Command> onGovernorChanged(GovernorChanged changed) {
    governorSettings = changed.settings();
    int cap =
        Math.max(
            changed.settings().minCap(), Math.min(decision.cap(), changed.settings().burstCap()));
    decision =
        new GovernorPolicy.Decision(
            decision.mode(), cap, "caps changed to " + changed.settings(), decision.lastDecrease());
    logDecision(decision);
    serveDemand();
    return this;
  }

  private void flushStatusCache() {
    if (statusCache.isEmpty()) {
      return;
    }
    List<int[]> batch = new ArrayList<>(statusCache);
    statusCache.clear();
    // the context belongs to the actor's thread; the logger may be used from any
    org.slf4j.Logger log = getContext().getLog();
    CompletableFuture.runAsync(
            () -> deps.store().markStatuses(run.scopeId(), batch), deps.blocking())
        .whenComplete(
            (ok, failure) -> {
              if (failure != null) {
                // only a cache: a claim corrects whatever it lost
                log.warn("status cache write failed: {}", failure.toString());
              }
            });
  }

  RunProgress progress() {
    long leased = offered.size();
    long pending = status.length - done - failed - closed - leased;
    Counts counts = new Counts(status.length, pending, leased, done, failed, closed);
    Instant now = deps.clock().instant();
    // rate over the last ten seconds of real time, from samples taken every tick
    double rate = 0;
    if (rateSamples.size() > 1) {
      long[] first = rateSamples.peekFirst();
      long[] last = rateSamples.peekLast();
      double seconds = (last[0] - first[0]) / 1_000_000_000.0;
      rate = seconds > 0 ? (last[1] - first[1]) / seconds : 0;
    }
    long remaining = pending + leased;
    Instant projected =
        remaining == 0 ? now : rate > 0 ? now.plusMillis((long) (remaining / rate * 1000)) : null;
    double backlogAge = 0;
    if (stopping == null) {
      if (!ready.isEmpty() || nextLoad < status.length) {
        backlogAge = Duration.between(startedAt, now).toMillis() / 1000.0;
      } else if (!waiting.isEmpty() && !waiting.peek().at().isAfter(now)) {
        backlogAge = Duration.between(waiting.peek().at(), now).toMillis() / 1000.0;
      }
    }
    return new RunProgress(
        counts,
        backlogAge,
        rate,
        projected,
        staleRejections,
        leaseExpiries,
        reconciliations,
        throttledAnswers,
        new RunProgress.GovernorView(
            decision.mode(), decision.cap(), decision.reason(), List.copyOf(governorChanges)));
  }

  // --- stopping: deadline, cancel, too many failures
  // ----------------------------------------------

  private Behavior<Command> onStop(Stop stop) {
    if (stopping == null) {
      beginStop(stop);
    }
    return this;
  }

  private void beginStop(Stop stop) {
    stopping = stop;
    getContext().getLog().info("run {}: stopping ({})", run.runId(), stop.reason());
    for (RequestWork request : demand) {
      request.replyTo().tell(new WorkBatch(run.runId(), List.of(), true, getContext().getSelf()));
    }
    demand.clear();
    ready.clear();
    waiting.clear();
    deregister();
    nextClose = 0;
    loadClosePage();
  }

  private void loadClosePage() {
    if (closePageLoading) {
      return;
    }
    if (nextClose >= status.length) {
      if (closesInFlight == 0) {
        finishStopped();
      }
      return;
    }
    closePageLoading = true;
    int from = nextClose;
    readPage(
        from,
        CLOSE_PARALLELISM,
        (rows, failure) -> new ClosePageLoaded(failure == null ? rows : null, from));
  }

  private Behavior<Command> onClosePageLoaded(ClosePageLoaded page) {
    closePageLoading = false;
    if (page.rows() == null) {
      getContext().getLog().warn("run {}: reading items to close failed, retrying", run.runId());
      timers.startSingleTimer(new Tick(), Duration.ofSeconds(1));
      loadClosePage();
      return this;
    }
    nextClose = page.rows().isEmpty() ? status.length : page.from() + page.rows().size();
    for (RunItemStore.Row row : page.rows()) {
      byte s = status[row.seq()];
      if (s == DONE || s == FAILED || s == CLOSED) {
        continue;
      }
      closesInFlight++;
      deps.items()
          .close(itemId(row), stopping.cancel() ? "cancelled" : "deadline: " + stopping.reason())
          .whenComplete(
              (reply, failure) ->
                  getContext()
                      .getSelf()
                      .tell(
                          new CloseAnswered(
                              row.seq(), reply, failure == null ? null : failure.toString())));
    }
    if (closesInFlight == 0) {
      loadClosePage();
    }
    return this;
  }

  private Behavior<Command> onCloseAnswered(CloseAnswered answer) {
    closesInFlight--;
    if (answer.reply() instanceof WorkItem.Accepted a) {
      switch (a.item().status()) {
        case DONE -> setStatus(answer.seq(), DONE);
        case FAILED -> setStatus(answer.seq(), FAILED);
        default -> setStatus(answer.seq(), CLOSED);
      }
    } else {
      // an item we could not fence off must not be reported closed: try it again
      getContext()
          .getLog()
          .warn("run {}: closing item {} failed: {}", run.runId(), answer.seq(), answer.error());
      nextClose = Math.min(nextClose, answer.seq());
    }
    if (closesInFlight == 0) {
      loadClosePage();
    }
    return this;
  }

  private void finishStopped() {
    RunState state;
    if (stopping.cancel()) {
      state = RunState.CANCELLED;
    } else if (done == status.length) {
      state = RunState.SUCCEEDED;
    } else if (done == 0 || failed > run.request().maxFailedItems()) {
      state = RunState.FAILED;
    } else {
      state = RunState.PARTIAL;
    }
    finish(state, stopping.reason());
  }

  /**
   * Leaves the receptionist once: pools stop asking at once instead of when the actor stops. (The
   * receptionist fails on removing what it does not hold, so never twice.)
   */
  private void deregister() {
    if (registered) {
      registered = false;
      var receptionist = getContext().getSystem().receptionist();
      receptionist.tell(Receptionist.deregister(SERVICE_KEY, getContext().getSelf()));
      receptionist.tell(Receptionist.deregister(serviceKeyOf(run.runId()), getContext().getSelf()));
    }
  }

  private void finish(RunState state, String reason) {
    if (finished) {
      return;
    }
    finished = true;
    flushStatusCache();
    deregister();
    outcomeTo.tell(new Outcome(run.runId(), state, progress(), reason));
    stopping = stopping == null ? new Stop(reason, false) : stopping;
    timers.cancelAll();
  }
}

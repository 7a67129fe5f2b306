package io.fencekeeper.dispatch;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.provider.budget.ThrottleShare;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
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
 * Dispatches one run's items on one node: the items of the shards this node hosts, to this node's
 * worker pool, at most {@code slice} in flight (docs/design.md, "Dispatch on every node"). Item
 * identities are paged from {@code run_item} shard by shard, never held all at once; terminal
 * statuses go back to {@code run_item} in batches, and a tally per shard goes to the node's {@link
 * DispatchAgent} once a second. Pools elsewhere may take what this node's own pool cannot (a steal:
 * this node has no pool, or its pool is full or leaving). It wires its parts: {@link NodeItems}
 * (the items and their rules), {@link ShardPaging}, {@link ProgressMeter}.
 */
public final class NodeDispatcher extends AbstractBehavior<ToDispatcher> {

  static final int PAGE = 1000;
  static final int LOW_WATER = 500;
  static final Duration TICK = Duration.ofMillis(250);

  /** Reports (and status writes) every this many ticks: once a second. */
  static final int REPORT_EVERY_TICKS = 4;

  // parked items due within this count in a report's demand: a slice follows a report by about a
  // second, so an item whose wait ends (a lease taken over, a retry) finds a slice to go out in
  static final Duration DEMAND_AHEAD = Duration.ofSeconds(2);

  /** The dispatcher's own messages; pools speak {@link WorkProtocol}. */
  public sealed interface Command extends ToDispatcher {}

  /**
   * From the agent: this node's slice of the run's cap, whether the run is stopping, and the items
   * whose leases a lost node held ({@link DispatchProtocol.Assignment#lostLeases}).
   */
  record Assigned(int slice, boolean stopping, List<Integer> lostLeases) implements Command {}

  /** From the agent: the item shards this node hosts now (null: not read yet). */
  record Hosted(Set<Integer> shards) implements Command {}

  /** From the agent: a member was removed from the cluster; the shards it hosted come next. */
  record MemberLost() implements Command {}

  private record Tick() implements Command {}

  private record PageLoaded(int shard, List<ScopeRows.Row> rows) implements Command {}

  private record PageFailed(String error) implements Command {}

  private record Reopened(WorkQueue.Ref ref, WorkItem.Reply reply) implements Command {}

  /** A quarantined item's answer to the periodic look-up; null when it did not answer. */
  private record QuarantineLookedUp(WorkQueue.Ref ref, WorkItem.Reply reply) implements Command {}

  private record Written(List<ScopeRows.StatusWrite> batch, boolean ok) implements Command {}

  /** A silent offer's item answered whether a lease on it still runs; null: it did not answer. */
  private record OfferChecked(WorkQueue.Ref ref, Instant askedAt, WorkItem.Reply reply)
      implements Command {}

  /**
   * What a node's dispatchers need from it; {@code workers}: this node's pool size (0: no pool,
   * only other nodes' pools and the lease API take its items).
   */
  public record Dependencies(
      Clock clock,
      ScopeRows rows,
      ItemGateway items,
      ItemShards shards,
      Executor blocking,
      Duration lease,
      Duration offerGrace,
      int workers) {}

  static Behavior<ToDispatcher> create(
      RunWork run,
      DispatchProtocol.Assignment first,
      Set<Integer> hosted,
      Dependencies deps,
      ActorRef<DispatchProtocol.RunReport> reportTo) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> new NodeDispatcher(ctx, timers, run, first, hosted, deps, reportTo)));
  }

  private final RunWork run;
  private final Dependencies deps;
  private final ActorRef<DispatchProtocol.RunReport> reportTo;
  private final Instant startedAt;
  private final Address self;

  private final NodeItems items;
  private final WorkQueue queue;
  private final ShardPaging paging = new ShardPaging();
  private final ProgressMeter meter = new ProgressMeter();
  private final ArrayDeque<RequestWork> demand = new ArrayDeque<>();
  // items the lease API settled while a page was being read, tried again once it is in
  private final List<WorkProtocol.SettledElsewhere> settledWhileLoading = new ArrayList<>();
  private final LeavingPools leavingPools;

  private Set<Integer> hosted;
  private int slice;
  private boolean stopping;
  private boolean loading;
  private boolean writing;
  private boolean registered = true;
  private long ticks;
  private long lastLocalRequestNanos = Long.MIN_VALUE / 2;
  // the provider calls the pools made for this run's items since the last report
  private ThrottleShare.Calls calls = ThrottleShare.Calls.NONE;

  private NodeDispatcher(
      ActorContext<ToDispatcher> ctx,
      TimerScheduler<ToDispatcher> timers,
      RunWork run,
      DispatchProtocol.Assignment first,
      Set<Integer> hosted,
      Dependencies deps,
      ActorRef<DispatchProtocol.RunReport> reportTo) {
    super(ctx);
    this.run = run;
    this.deps = deps;
    this.reportTo = reportTo;
    this.startedAt = deps.clock().instant();
    this.items = new NodeItems(Math.toIntExact(run.itemCount()));
    this.queue = items.queue;
    this.self = Cluster.get(ctx.getSystem()).selfMember().address();
    this.leavingPools = new LeavingPools(Cluster.get(ctx.getSystem()));
    this.slice = Math.max(0, first.slice());
    items.lostLeases(first.lostLeases());
    if (!first.lostLeases().isEmpty()) {
      paging.memberLost();
    }
    var receptionist = ctx.getSystem().receptionist();
    receptionist.tell(Receptionist.register(WorkProtocol.SERVICE_KEY, ctx.getSelf()));
    receptionist.tell(Receptionist.register(WorkProtocol.serviceKeyOf(run.runId()), ctx.getSelf()));
    timers.startTimerWithFixedDelay(new Tick(), TICK);
    onHosted(new Hosted(hosted));
    if (first.stopping()) {
      beginStop();
    }
  }

  @Override
  public Receive<ToDispatcher> createReceive() {
    return newReceiveBuilder()
        .onMessage(RequestWork.class, this::onRequestWork)
        .onMessage(Settled.class, this::onSettled)
        .onMessage(
            WorkProtocol.SettledAll.class,
            all -> {
              all.settled().forEach(this::onSettled);
              return this;
            })
        .onMessage(
            WorkProtocol.CallsMade.class,
            made -> {
              calls = calls.plus(made.calls());
              return this;
            })
        .onMessage(PoolLeaving.class, this::onPoolLeaving)
        .onMessage(WorkProtocol.SettledElsewhere.class, this::onSettledElsewhere)
        .onMessage(Assigned.class, this::onAssigned)
        .onMessage(Hosted.class, this::onHosted)
        .onMessage(
            MemberLost.class,
            lost -> {
              paging.memberLost();
              return this;
            })
        .onMessage(PageLoaded.class, this::onPageLoaded)
        .onMessage(PageFailed.class, this::onPageFailed)
        .onMessage(Reopened.class, this::onReopened)
        .onMessage(QuarantineLookedUp.class, this::onQuarantineLookedUp)
        .onMessage(Written.class, this::onWritten)
        .onMessage(OfferChecked.class, this::onOfferChecked)
        .onMessage(Tick.class, this::onTick)
        .build();
  }

  // --- what the coordinator and the node say -----------------------------------------------------

  private Behavior<ToDispatcher> onAssigned(Assigned assigned) {
    if (assigned.slice() != DispatchProtocol.KEEP_SLICE) {
      slice = assigned.slice();
    }
    items.lostLeases(assigned.lostLeases());
    if (!assigned.lostLeases().isEmpty()) {
      paging.memberLost(); // the coordinator saw a node go before this node's agent did
    }
    if (assigned.stopping() && !stopping) {
      beginStop();
    }
    serveDemand();
    return this;
  }

  /**
   * Shards that left this node leave the queue (their new host dispatches them); shards that
   * arrived are paged in.
   */
  private Behavior<ToDispatcher> onHosted(Hosted now) {
    if (now.shards() == null) {
      return this; // not read yet
    }
    hosted = Set.copyOf(now.shards());
    paging.hosted(hosted);
    queue.dropShards(hosted::contains);
    queueArrivals();
    loadMore();
    serveDemand();
    return this;
  }

  // --- handing out work --------------------------------------------------------------------------

  private Behavior<ToDispatcher> onRequestWork(RequestWork request) {
    if (stopping) {
      request.replyTo().tell(batch(List.of(), true));
      return this;
    }
    Address member = memberOf(request.replyTo());
    if (leavingPools.contains(request.replyTo(), member)) {
      request.replyTo().tell(batch(List.of(), false));
      return this;
    }
    if (request.steal()) {
      // another node's pool: only what this node's own pool cannot take now
      List<WorkOffer> offers = localPoolActive() ? List.of() : offers(request.max(), member);
      request.replyTo().tell(batch(offers, false));
      return this;
    }
    if (member.equals(self)) {
      lastLocalRequestNanos = System.nanoTime();
      if (!request.answerNow() && dry()) {
        // nothing here for now: the pool may steal meanwhile, and asks again soon
        request
            .replyTo()
            .tell(new WorkBatch(run.runId(), List.of(), false, getContext().getSelf(), true));
        return this;
      }
    }
    demand.add(request);
    serveDemand();
    if (request.answerNow() && demand.remove(request)) {
      request.replyTo().tell(nothingNow());
    }
    return this;
  }

  /**
   * An empty answer at once, saying why (the lease API's claim-next tells its caller): the cap is
   * reached while items are ready, or every open item is in flight or waits for a time, or nothing
   * is open on this node's shards at all.
   */
  private WorkBatch nothingNow() {
    Instant now = deps.clock().instant();
    WorkProtocol.NothingNow why;
    Instant retryAt;
    if (queue.hasReady() && now.isBefore(run.deadline())) {
      why = WorkProtocol.NothingNow.AT_CAP;
      retryAt = now.plus(Duration.ofSeconds(1)); // slices change with the next assignment
    } else if (hosted != null && !loading && paging.allPaged() && items.idle()) {
      why = WorkProtocol.NothingNow.DRAINED;
      retryAt = null;
    } else {
      why = WorkProtocol.NothingNow.WAITING;
      Instant soonest = queue.nextDue().orElse(now.plus(Duration.ofSeconds(1)));
      retryAt = soonest.isBefore(now) ? now : soonest;
    }
    return new WorkBatch(
        run.runId(), List.of(), false, getContext().getSelf(), false, why, retryAt);
  }

  /**
   * Nothing to hand out for now and nothing more to page in: every item of the shards this node
   * hosts is settled, in flight or waiting for a time. Not before the hosted shards are known.
   */
  private boolean dry() {
    if (hosted == null || stopping || loading || !paging.allPaged()) {
      return false;
    }
    queue.releaseDue(deps.clock().instant());
    return !queue.hasReady();
  }

  /** This node's pool is taking work: it has asked within the last second. */
  private boolean localPoolActive() {
    return deps.workers() > 0
        && System.nanoTime() - lastLocalRequestNanos < Duration.ofSeconds(1).toNanos();
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
    if (stopping || !now.isBefore(run.deadline())) {
      return; // past the deadline nothing new starts, by this node's own clock
    }
    queue.releaseDue(now);
    while (!demand.isEmpty() && queue.hasReady() && queue.inFlight() < slice) {
      RequestWork request = demand.poll();
      Address member = memberOf(request.replyTo());
      if (leavingPools.contains(request.replyTo(), member)) {
        continue; // its member is leaving the cluster: no answer, the pool is going away
      }
      List<WorkOffer> offers = offers(request.max(), member);
      if (offers.isEmpty()) {
        demand.addFirst(request);
        break;
      }
      request.replyTo().tell(batch(offers, false));
    }
    loadMore();
  }

  /** Up to {@code max} ready items within the slice, now offered to a pool on {@code member}. */
  private List<WorkOffer> offers(int max, Address member) {
    Instant now = deps.clock().instant();
    if (stopping || !now.isBefore(run.deadline())) {
      return List.of();
    }
    queue.releaseDue(now);
    int allowed = Math.min(max, slice - queue.inFlight());
    if (allowed <= 0) {
      return List.of();
    }
    return queue.take(allowed, now, member).stream()
        .map(
            ref ->
                new WorkOffer(
                    ref.seq(), ref.itemId(), run.maxAttempts(), deps.lease(), run.provider()))
        .toList();
  }

  /** The node of a pool; a pool on this node has a local address. */
  private Address memberOf(ActorRef<?> pool) {
    Address address = pool.path().address();
    return address.hasLocalScope() ? self : address;
  }

  private WorkBatch batch(List<WorkOffer> offers, boolean runFinished) {
    return new WorkBatch(run.runId(), offers, runFinished, getContext().getSelf());
  }

  // --- paging the hosted shards in, and reopening on resume --------------------------------------

  private void loadMore() {
    if (loading || stopping || (queue.readyCount() >= LOW_WATER && !paging.hasArrivals())) {
      return;
    }
    var shard = paging.nextShard();
    if (shard.isEmpty()) {
      return;
    }
    loading = true;
    int s = shard.getAsInt();
    int from = paging.from(s);
    ActorRef<ToDispatcher> me = getContext().getSelf();
    CompletableFuture.supplyAsync(
            () -> deps.rows().pageShard(run.scopeId(), s, from, PAGE), deps.blocking())
        .whenComplete(
            (rows, failure) ->
                me.tell(
                    failure == null
                        ? new PageLoaded(s, rows)
                        : new PageFailed(failure.toString())));
  }

  private Behavior<ToDispatcher> onPageLoaded(PageLoaded page) {
    loading = false;
    try {
      return pageLoaded(page);
    } finally {
      List<WorkProtocol.SettledElsewhere> held = List.copyOf(settledWhileLoading);
      settledWhileLoading.clear();
      held.forEach(this::onSettledElsewhere);
    }
  }

  private Behavior<ToDispatcher> pageLoaded(PageLoaded page) {
    boolean arrived = paging.arrived(page.shard());
    paging.loaded(page.shard(), page.rows(), PAGE);
    if (stopping || hosted == null || !hosted.contains(page.shard())) {
      queueArrivals();
      loadMore(); // the shard left while its page was read: its new host pages it
      return this;
    }
    items.intake(run, page.shard(), page.rows(), arrived).forEach(this::reopen);
    queueArrivals();
    serveDemand();
    return this;
  }

  /** Once no arrived shard waits to be paged, the arrivals' open items are queued. */
  private void queueArrivals() {
    if (!paging.hasArrivals()) {
      items.arrivalsPaged(this::keeps);
    }
  }

  /** A resumed run reopens what the deadline closed; DONE items are never redone. */
  private void reopen(WorkQueue.Ref ref) {
    ActorRef<ToDispatcher> me = getContext().getSelf();
    deps.items()
        .reopen(ref.itemId())
        .whenComplete((reply, failure) -> me.tell(new Reopened(ref, reply)));
  }

  private Behavior<ToDispatcher> onPageFailed(PageFailed failure) {
    loading = false;
    settledWhileLoading.clear(); // the page is read again, after the statuses were cached
    getContext().getLog().warn("run {}: loading items failed, retrying: {}", run.runId(), failure);
    return this;
  }

  private Behavior<ToDispatcher> onReopened(Reopened reopened) {
    // on no answer too it is handed out: the claim tells the truth
    items.reopened(
        reopened.ref(),
        reopened.reply() instanceof WorkItem.Accepted a
            && a.item().status() == WorkItem.Status.DONE,
        this::keeps);
    serveDemand();
    return this;
  }

  /**
   * Whether an open item stays with this dispatcher: its shard is hosted here and the run is not
   * stopping (else its shard's new host dispatches it, or the close sweep takes it).
   */
  private boolean keeps(WorkQueue.Ref ref) {
    return !stopping && hosted != null && hosted.contains(ref.shard());
  }

  // --- learning how attempts ended ---------------------------------------------------------------

  private Behavior<ToDispatcher> onSettled(Settled settled) {
    int seq = settled.seq();
    if (seq < 0 || seq >= items.board.size()) {
      return this;
    }
    items
        .settled(seq, settled.result(), deps.clock().instant(), deps.lease(), this::keeps)
        .ifPresent(
            reason ->
                getContext()
                    .getLog()
                    .warn("run {}: item at {} quarantined: {}", run.runId(), seq, reason));
    afterSettling();
    return this;
  }

  private void afterSettling() {
    if (!stopping && run.tooManyFailed(items.board.failed())) {
      // the coordinator stops the run by the same rule within a report; nothing more goes out now
      getContext()
          .getLog()
          .info("run {}: more items failed than maxFailedItems allows", run.runId());
      beginStop();
    }
    serveDemand();
    if (!stopping && paging.allPaged() && items.idle()) {
      report(); // nothing left here: say so now, the run may be over
    }
  }

  /**
   * The lease API settled an item of this run. One handed out from here settles by its offer. One
   * queued here but never handed out (a claim by id: the worker chose it) is counted where it
   * stands: else the run's counts would not see it until some claim-next handed it out again, and a
   * run worked only by id would not end (docs/external-workers.md).
   */
  private Behavior<ToDispatcher> onSettledElsewhere(WorkProtocol.SettledElsewhere elsewhere) {
    var offered = queue.offeredSeqOf(elsewhere.itemId());
    if (offered.isPresent()) {
      return onSettled(new Settled(offered.get(), elsewhere.result()));
    }
    if (items.settledElsewhere(elsewhere.itemId(), elsewhere.result())) {
      afterSettling();
    } else if (loading) {
      // the page being read may have been read before the API cached the item's status
      settledWhileLoading.add(elsewhere);
    }
    return this;
  }

  /** Asks the quarantined items every few seconds whether an operator retried them. */
  private void lookUpQuarantined(Instant now) {
    ActorRef<ToDispatcher> me = getContext().getSelf();
    for (WorkQueue.Ref ref : items.quarantined.dueForLookup(now)) {
      deps.items()
          .get(ref.itemId())
          .whenComplete((reply, failure) -> me.tell(new QuarantineLookedUp(ref, reply)));
    }
  }

  private Behavior<ToDispatcher> onQuarantineLookedUp(QuarantineLookedUp answer) {
    // no answer, or the close sweep decides now: still quarantined
    boolean still =
        stopping
            || !(answer.reply() instanceof WorkItem.Accepted a)
            || a.item().status() == WorkItem.Status.QUARANTINED;
    items.quarantineAnswered(answer.ref(), still);
    serveDemand();
    return this;
  }

  // --- the periodic tick: offers that never came back, retries due, reports ----------------------

  private Behavior<ToDispatcher> onTick(Tick tick) {
    Instant now = deps.clock().instant();
    checkSilentOffers(now);
    int lost = queue.expireOffersTo(member -> deps.shards().isUnreachable(member));
    if (lost > 0) {
      getContext()
          .getLog()
          .warn(
              "run {}: {} items offered to workers on unreachable nodes handed out again",
              run.runId(),
              lost);
    }
    if (++ticks % REPORT_EVERY_TICKS == 0) {
      meter.sample(System.nanoTime(), items.board.done());
      report();
    }
    if (!stopping) {
      lookUpQuarantined(now);
      serveDemand();
    }
    return this;
  }

  /**
   * Asks the items of the offers silent for a lease and a grace ({@link NodeItems#offerChecked}).
   */
  private void checkSilentOffers(Instant now) {
    ActorRef<ToDispatcher> me = getContext().getSelf();
    Instant silentSince = now.minus(deps.lease()).minus(deps.offerGrace());
    for (WorkQueue.Ref ref : queue.silentSince(silentSince, now)) {
      deps.items()
          .get(ref.itemId())
          .whenComplete((reply, failure) -> me.tell(new OfferChecked(ref, now, reply)));
    }
  }

  private Behavior<ToDispatcher> onOfferChecked(OfferChecked checked) {
    Instant now = deps.clock().instant();
    if (items.offerChecked(
        checked.ref().seq(), checked.askedAt(), checked.reply(), now, deps.lease())) {
      serveDemand();
    }
    return this;
  }

  /**
   * Writes the terminal statuses to {@code run_item}, then reports: a tally the coordinator adds up
   * is never ahead of the cache a shard's next host starts from. A write that fails is tried again
   * with the next one.
   */
  private void report() {
    if (writing) {
      return; // the next tick reports, after this write
    }
    DispatchProtocol.RunReport report = runReport();
    calls = ThrottleShare.Calls.NONE; // each call is reported once (a report lost is a second lost)
    List<ScopeRows.StatusWrite> batch = items.board.drainWrites();
    if (batch.isEmpty()) {
      reportTo.tell(report);
      return;
    }
    writing = true;
    ActorRef<ToDispatcher> me = getContext().getSelf();
    try {
      CompletableFuture.runAsync(
              () -> deps.rows().markStatuses(run.scopeId(), batch), deps.blocking())
          .whenComplete(
              (ok, failure) -> {
                if (failure == null) {
                  reportTo.tell(report);
                }
                me.tell(new Written(batch, failure == null));
              });
    } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
      // the node shuts down and its blocking pool stopped before this tick: the statuses stay on
      // the board (a shard's next host reads them from the journal); no error for a clean exit
      writing = false;
      items.board.unwritten(batch);
    }
  }

  private Behavior<ToDispatcher> onWritten(Written written) {
    writing = false;
    if (!written.ok()) {
      getContext()
          .getLog()
          .warn(
              "run {}: writing {} statuses failed, trying again",
              run.runId(),
              written.batch().size());
      items.board.unwritten(written.batch());
    }
    return this;
  }

  DispatchProtocol.RunReport runReport() {
    int inFlight = queue.inFlight();
    Instant soon = deps.clock().instant().plus(DEMAND_AHEAD);
    int more = queue.readyCount() + queue.parkedDueBy(soon) + (paging.allPaged() ? 0 : LOW_WATER);
    int wanted = inFlight + more;
    int demandNow = deps.workers() > 0 ? Math.min(deps.workers(), wanted) : wanted;
    return new DispatchProtocol.RunReport(
        run.runId(),
        run.resumes(),
        slice,
        inFlight,
        demandNow,
        meter.itemsPerSecond(),
        backlogAgeSeconds(deps.clock().instant()),
        hosted != null && paging.allPaged() && !loading,
        items.tallies(shard -> hosted != null && hosted.contains(shard)),
        queue.inFlightSeqs(),
        calls);
  }

  /** The age of the oldest item that is neither done nor leased, as far as memory shows it. */
  private double backlogAgeSeconds(Instant now) {
    if (stopping) {
      return 0;
    }
    if (queue.hasReady() || !paging.allPaged()) {
      return Duration.between(startedAt, now).toMillis() / 1000.0;
    }
    return queue
        .overdueSince(now)
        .map(since -> Duration.between(since, now).toMillis() / 1000.0)
        .orElse(0.0);
  }

  // --- stopping: deadline, cancel, too many failures (the coordinator says) ----------------------

  private void beginStop() {
    stopping = true;
    getContext().getLog().info("run {}: dispatch on this node stops", run.runId());
    for (RequestWork request : demand) {
      request.replyTo().tell(batch(List.of(), true));
    }
    demand.clear();
    queue.clearWaiting();
    deregister();
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
}

package io.fencekeeper.worker;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.NodeWorkers;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.budget.ThrottleShare;
import io.fencekeeper.worker.WorkProtocol.PoolLeaving;
import io.fencekeeper.worker.WorkProtocol.RequestWork;
import io.fencekeeper.worker.WorkProtocol.Settled;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import io.fencekeeper.worker.WorkProtocol.WorkBatch;
import io.fencekeeper.worker.WorkProtocol.WorkOffer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.apache.pekko.Done;
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
 * The workers of one node: up to {@code capacity} attempts in flight, pulled from the dispatchers
 * of the running runs on this node, which hand out the items whose shards this node hosts, so an
 * attempt's messages to its item stay on the node (docs/design.md, "Dispatch on every node"). When
 * every local dispatcher is dry (its node's items are done, in flight or waiting), the pool steals
 * from the other nodes' dispatchers: at once, only what their own pools cannot take, each asked
 * less often while it has nothing to give. A pool told to {@link Leave} (its node shuts down) takes
 * no more work, says so to the dispatchers, and answers once its attempts have ended: each hands
 * its lease back at its next step with nothing in flight, so no item waits out a lease for a node
 * that left cleanly.
 */
public final class WorkerPool extends AbstractBehavior<WorkerPool.Command> {

  public sealed interface Command {}

  /** Every node's pool, for the dashboard's cluster view. */
  public static final ServiceKey<Command> SERVICE_KEY =
      ServiceKey.create(Command.class, "worker-pool");

  /** How busy is this pool (asked from any node). */
  public record GetUse(ActorRef<Use> replyTo) implements Command, CborSerializable {}

  public record Use(String node, int inFlight, int capacity) implements CborSerializable {}

  record DispatchersChanged(Set<ActorRef<ToDispatcher>> dispatchers) implements Command {}

  record BatchReceived(WorkBatch batch) implements Command {}

  record AttemptFinished(
      ActorRef<ToDispatcher> dispatcher, int seq, String workerId, AttemptResult result)
      implements Command {}

  private record Recount() implements Command {}

  private record SendSettled() implements Command {}

  /** Take no more work, end the attempts in flight; {@code replyTo} hears when none is left. */
  public record Leave(ActorRef<Done> replyTo) implements Command {}

  public static Behavior<Command> create(int capacity, String nodeName, ItemAttempt.Context ctx) {
    return create(capacity, nodeName, Map.of(ProviderName.DEFAULT, ctx));
  }

  /** {@code attempts}: one context per provider name; a work offer says which one to call. */
  public static Behavior<Command> create(
      int capacity, String nodeName, Map<String, ItemAttempt.Context> attempts) {
    return create(capacity, nodeName, attempts, d -> d.path().address().hasLocalScope());
  }

  /** {@code local}: whether a dispatcher runs on this node (tests decide it for their probes). */
  static Behavior<Command> create(
      int capacity,
      String nodeName,
      Map<String, ItemAttempt.Context> attempts,
      Predicate<ActorRef<?>> local) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> new WorkerPool(context, timers, capacity, nodeName, attempts, local)));
  }

  /** How often a pool asks again a dispatcher that was dry, and looks for work to steal. */
  static final Duration RECOUNT_EVERY = Duration.ofMillis(500);

  private static final String RECOUNT = "recount";

  /** How often the endings of stolen items go back to their dispatchers, together. */
  static final Duration SEND_SETTLED_EVERY = Duration.ofMillis(250);

  /** A dispatcher elsewhere that had nothing to give is asked at most this rarely. */
  static final Duration STEAL_BACKOFF_MAX = Duration.ofSeconds(8);

  private final int capacity;
  private final String nodeName;
  private final Map<String, ItemAttempt.Context> attempts;
  private final ActorRef<WorkBatch> batchAdapter;
  private final Map<ActorRef<ToDispatcher>, Integer> requested = new HashMap<>();
  private final AtomicLong workerIds = new AtomicLong();
  // lost together, kept apart: the loss cohorts this node has in flight, across every run
  private final CohortGate cohorts = CohortGate.forPool();
  // local dispatchers that answered dry, until when they are not asked again
  private final Map<ActorRef<ToDispatcher>, Long> dryUntil = new HashMap<>();
  // dispatchers elsewhere: when each may be asked for a steal next, its back-off, and how many
  // items an unanswered steal asked it for
  private final Map<ActorRef<ToDispatcher>, long[]> stealAt = new HashMap<>();
  // endings of stolen items not yet sent to their dispatchers on other nodes
  private final Map<ActorRef<ToDispatcher>, List<Settled>> unsent = new HashMap<>();
  // the provider calls made for each dispatcher's run, sent to it at each recount
  private final Map<ActorRef<ToDispatcher>, RunCalls> calls = new HashMap<>();
  private int inFlight;
  // read by the attempts before every provider call, from other threads
  private final AtomicBoolean leaving = new AtomicBoolean();
  private final List<ActorRef<Done>> leaveAnswers = new ArrayList<>();
  private final Clock clock;
  private final Predicate<ActorRef<?>> local;
  private final TimerScheduler<Command> timers;

  private WorkerPool(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      int capacity,
      String nodeName,
      Map<String, ItemAttempt.Context> attempts,
      Predicate<ActorRef<?>> local) {
    super(context);
    this.timers = timers;
    this.local = local;
    this.capacity = capacity;
    this.nodeName = nodeName;
    this.attempts = Map.copyOf(attempts);
    this.clock =
        attempts.values().stream().findFirst().map(ItemAttempt.Context::clock).orElseThrow();
    this.batchAdapter = context.messageAdapter(WorkBatch.class, BatchReceived::new);
    ActorRef<Receptionist.Listing> listingAdapter =
        context.messageAdapter(
            Receptionist.Listing.class,
            listing ->
                new DispatchersChanged(listing.getServiceInstances(WorkProtocol.SERVICE_KEY)));
    context
        .getSystem()
        .receptionist()
        .tell(Receptionist.subscribe(WorkProtocol.SERVICE_KEY, listingAdapter));
    context.getSystem().receptionist().tell(Receptionist.register(SERVICE_KEY, context.getSelf()));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(DispatchersChanged.class, this::onDispatchersChanged)
        .onMessage(BatchReceived.class, this::onBatch)
        .onMessage(AttemptFinished.class, this::onAttemptFinished)
        .onMessage(GetUse.class, this::onGetUse)
        .onMessage(Leave.class, this::onLeave)
        .onMessage(
            Recount.class,
            recount -> {
              sendCalls();
              requestWork();
              return this;
            })
        .onMessage(
            SendSettled.class,
            send -> {
              sendSettled();
              return this;
            })
        .build();
  }

  private Behavior<Command> onGetUse(GetUse query) {
    query.replyTo().tell(new Use(nodeName, inFlight, capacity));
    return this;
  }

  private Behavior<Command> onLeave(Leave leave) {
    if (!leaving.getAndSet(true)) {
      getContext()
          .getLog()
          .info("worker pool leaving: no more work taken, {} attempts to end", inFlight);
      for (ActorRef<ToDispatcher> dispatcher : requested.keySet()) {
        dispatcher.tell(new PoolLeaving(batchAdapter));
      }
      requested.clear();
    }
    leaveAnswers.add(leave.replyTo());
    answerLeaveWhenIdle();
    return this;
  }

  private void answerLeaveWhenIdle() {
    if (leaving.get() && inFlight == 0) {
      sendSettled(); // the node goes away next: nothing it learned may stay behind
      sendCalls();
      leaveAnswers.forEach(answer -> answer.tell(Done.getInstance()));
      leaveAnswers.clear();
    }
  }

  private Behavior<Command> onDispatchersChanged(DispatchersChanged changed) {
    if (leaving.get()) {
      return this;
    }
    // the recount runs only while some run is dispatched: an idle node does not wake for nothing
    if (changed.dispatchers().isEmpty()) {
      timers.cancel(RECOUNT);
    } else if (!timers.isTimerActive(RECOUNT)) {
      timers.startTimerWithFixedDelay(RECOUNT, new Recount(), RECOUNT_EVERY);
    }
    requested.keySet().retainAll(changed.dispatchers());
    dryUntil.keySet().retainAll(changed.dispatchers());
    calls.keySet().retainAll(changed.dispatchers());
    stealAt.keySet().retainAll(changed.dispatchers());
    for (ActorRef<ToDispatcher> dispatcher : changed.dispatchers()) {
      if (isLocal(dispatcher)) {
        requested.putIfAbsent(dispatcher, 0);
      } else {
        stealAt.putIfAbsent(dispatcher, new long[] {0, RECOUNT_EVERY.toNanos(), 0});
      }
    }
    requestWork();
    return this;
  }

  private Behavior<Command> onBatch(BatchReceived received) {
    WorkBatch batch = received.batch();
    ActorRef<ToDispatcher> dispatcher = batch.dispatcher();
    if (leaving.get()) {
      // offered before the dispatcher heard this pool leave: nothing was claimed, offer it again
      batch
          .offers()
          .forEach(
              offer ->
                  dispatcher.tell(
                      new Settled(offer.seq(), new AttemptResult.RetryAt(clock.instant()))));
      return this;
    }
    if (batch.finished()) {
      requested.remove(dispatcher);
      stealAt.remove(dispatcher);
    } else if (requested.containsKey(dispatcher)) {
      requested.put(dispatcher, 0);
      if (batch.dry()) {
        dryUntil.put(dispatcher, System.nanoTime() + RECOUNT_EVERY.toNanos());
      }
    } else {
      stole(dispatcher, !batch.offers().isEmpty());
    }
    for (WorkOffer offer : batch.offers()) {
      start(dispatcher, offer);
    }
    requestWork();
    return this;
  }

  private void start(ActorRef<ToDispatcher> dispatcher, WorkOffer offer) {
    inFlight++;
    String workerId = NodeWorkers.id(nodeName, workerIds.incrementAndGet());
    ItemAttempt.Context provider = attempts.get(offer.providerName());
    if (provider == null) {
      // nodes configured with other providers: nothing was claimed, another node may take it
      getContext()
          .getLog()
          .warn("no provider '{}' on this node for {}", offer.providerName(), offer.itemId());
      getContext()
          .getSelf()
          .tell(
              new AttemptFinished(
                  dispatcher,
                  offer.seq(),
                  workerId,
                  new AttemptResult.Abandoned(
                      "no provider '" + offer.providerName() + "' on " + nodeName)));
      return;
    }
    ItemAttempt attempt =
        new ItemAttempt(
            provider,
            offer.itemId(),
            workerId,
            offer.lease(),
            offer.maxAttempts(),
            leaving::get,
            cohorts,
            calls.computeIfAbsent(dispatcher, d -> new RunCalls()));
    getContext()
        .pipeToSelf(
            attempt.run(),
            (result, failure) ->
                new AttemptFinished(
                    dispatcher,
                    offer.seq(),
                    workerId,
                    failure == null
                        ? result
                        : new AttemptResult.Abandoned("worker failure: " + failure)));
  }

  private Behavior<Command> onAttemptFinished(AttemptFinished finished) {
    inFlight--;
    dryUntil.remove(finished.dispatcher()); // something of it settled: it may have work again
    Settled settled = new Settled(finished.seq(), finished.result());
    if (isLocal(finished.dispatcher())) {
      finished.dispatcher().tell(settled);
    } else {
      unsent.computeIfAbsent(finished.dispatcher(), d -> new ArrayList<>()).add(settled);
      if (!timers.isTimerActive("send-settled")) {
        timers.startSingleTimer("send-settled", new SendSettled(), SEND_SETTLED_EVERY);
      }
    }
    requestWork();
    answerLeaveWhenIdle();
    return this;
  }

  /**
   * Each run's provider calls since the last recount go to its dispatcher (nothing when there were
   * none), which reports them with its run's figures: the governor reads the share throttled.
   */
  private void sendCalls() {
    calls.forEach(
        (dispatcher, made) -> {
          ThrottleShare.Calls drained = made.drain();
          if (drained.calls() > 0 || drained.throttled() > 0) {
            dispatcher.tell(new WorkProtocol.CallsMade(drained));
          }
        });
  }

  private void sendSettled() {
    unsent.forEach((dispatcher, settled) -> dispatcher.tell(new WorkProtocol.SettledAll(settled)));
    unsent.clear();
  }

  private boolean isLocal(ActorRef<?> dispatcher) {
    return local.test(dispatcher);
  }

  /** A steal was answered: a dispatcher that gave nothing is asked less often, up to a limit. */
  private void stole(ActorRef<ToDispatcher> dispatcher, boolean gotWork) {
    long[] at = stealAt.get(dispatcher);
    if (at == null) {
      return;
    }
    long backoff =
        gotWork ? RECOUNT_EVERY.toNanos() : Math.min(at[1] * 2, STEAL_BACKOFF_MAX.toNanos());
    at[1] = backoff;
    at[0] = System.nanoTime() + backoff;
    at[2] = 0;
  }

  /**
   * Asks each local dispatcher without an open request for a share of the free capacity; when every
   * local dispatcher is dry, steals what is free from the others that are due.
   */
  private void requestWork() {
    if (leaving.get()) {
      return;
    }
    long now = System.nanoTime();
    for (long[] at : stealAt.values()) {
      if (at[2] != 0 && at[0] <= now) {
        at[2] = 0; // no answer within the back-off's limit: lost (its node is gone or cut off)
      }
    }
    int outstanding = requested.values().stream().mapToInt(Integer::intValue).sum();
    long stealing = stealAt.values().stream().mapToLong(at -> at[2]).sum();
    int free = (int) (capacity - inFlight - outstanding - stealing);
    if (free <= 0) {
      return;
    }
    dryUntil.values().removeIf(until -> until <= now);
    List<ActorRef<ToDispatcher>> idle = new ArrayList<>();
    requested.forEach(
        (dispatcher, open) -> {
          if (open == 0 && !dryUntil.containsKey(dispatcher)) {
            idle.add(dispatcher);
          }
        });
    if (!idle.isEmpty()) {
      int share = Math.max(1, free / idle.size());
      for (ActorRef<ToDispatcher> dispatcher : idle) {
        if (free <= 0) {
          break;
        }
        int ask = Math.min(share, free);
        requested.put(dispatcher, ask);
        free -= ask;
        dispatcher.tell(new RequestWork(ask, batchAdapter));
      }
      return;
    }
    if (outstanding > 0) {
      return; // a local dispatcher holds a request: its items come first
    }
    for (var entry : stealAt.entrySet()) {
      long[] at = entry.getValue();
      if (free <= 0) {
        break;
      }
      if (at[0] <= now && at[2] == 0) {
        at[0] = now + STEAL_BACKOFF_MAX.toNanos(); // until it answers
        at[2] = free;
        entry.getKey().tell(RequestWork.steal(free, batchAdapter));
        free = 0; // one steal at a time: the next recount asks the next one
      }
    }
  }
}

package io.fencekeeper.worker;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.ProviderName;
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
import java.util.HashSet;
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
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * The workers of one node: up to {@code capacity} attempts in flight, pulled from the dispatchers
 * of the running runs (wherever in the cluster they live). Work pulling keeps every node busy
 * without the dispatcher having to know how many workers exist. A pool told to {@link Leave} (its
 * node shuts down) takes no more work, says so to the dispatchers, and answers once its attempts
 * have ended: each hands its lease back at its next step with nothing in flight, so no item waits
 * out a lease for a node that left cleanly.
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

  /** Take no more work, end the attempts in flight; {@code replyTo} hears when none is left. */
  public record Leave(ActorRef<Done> replyTo) implements Command {}

  public static Behavior<Command> create(int capacity, String nodeName, ItemAttempt.Context ctx) {
    return create(capacity, nodeName, Map.of(ProviderName.DEFAULT, ctx), item -> true);
  }

  /**
   * {@code attempts}: one context per provider name; a work offer says which one to call. {@code
   * reachable}: whether an item's node answers now (an attempt waiting on one that does not is not
   * busy with the provider, and does not keep the pool from taking other work).
   */
  public static Behavior<Command> create(
      int capacity,
      String nodeName,
      Map<String, ItemAttempt.Context> attempts,
      Predicate<ItemId> reachable) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(new Recount(), RECOUNT_EVERY);
                  return new WorkerPool(context, capacity, nodeName, attempts, reachable);
                }));
  }

  static final Duration RECOUNT_EVERY = Duration.ofMillis(500);

  private final int capacity;
  private final String nodeName;
  private final Map<String, ItemAttempt.Context> attempts;
  private final ActorRef<WorkBatch> batchAdapter;
  private final Map<ActorRef<ToDispatcher>, Integer> requested = new HashMap<>();
  private final AtomicLong workerIds = new AtomicLong();
  private final Predicate<ItemId> reachable;
  // the item of every attempt in flight, by worker id
  private final Map<String, ItemId> running = new HashMap<>();
  // attempts whose item's node stopped answering while they ran, by worker id (see waiting())
  private final Set<String> waiting = new HashSet<>();
  private int inFlight;
  // read by the attempts before every provider call, from other threads
  private final AtomicBoolean leaving = new AtomicBoolean();
  private final List<ActorRef<Done>> leaveAnswers = new ArrayList<>();
  private final Clock clock;

  private WorkerPool(
      ActorContext<Command> context,
      int capacity,
      String nodeName,
      Map<String, ItemAttempt.Context> attempts,
      Predicate<ItemId> reachable) {
    super(context);
    this.capacity = capacity;
    this.reachable = reachable;
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
              requestWork();
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
      leaveAnswers.forEach(answer -> answer.tell(Done.getInstance()));
      leaveAnswers.clear();
    }
  }

  private Behavior<Command> onDispatchersChanged(DispatchersChanged changed) {
    if (leaving.get()) {
      return this;
    }
    requested.keySet().retainAll(changed.dispatchers());
    for (ActorRef<ToDispatcher> dispatcher : changed.dispatchers()) {
      requested.putIfAbsent(dispatcher, 0);
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
    } else if (requested.containsKey(dispatcher)) {
      requested.put(dispatcher, 0);
    }
    for (WorkOffer offer : batch.offers()) {
      start(dispatcher, offer);
    }
    requestWork();
    return this;
  }

  private void start(ActorRef<ToDispatcher> dispatcher, WorkOffer offer) {
    inFlight++;
    String workerId = nodeName + "/w" + workerIds.incrementAndGet();
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
    running.put(workerId, offer.itemId());
    ItemAttempt attempt =
        new ItemAttempt(
            provider, offer.itemId(), workerId, offer.lease(), offer.maxAttempts(), leaving::get);
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
    running.remove(finished.workerId());
    waiting.remove(finished.workerId());
    finished.dispatcher().tell(new Settled(finished.seq(), finished.result()));
    requestWork();
    answerLeaveWhenIdle();
    return this;
  }

  /**
   * Attempts waiting on an item whose node stopped answering (they finish when its shard answers
   * from a new home, or when their lease ends): up to the capacity, they leave their worker to
   * other items meanwhile. An attempt stays counted as waiting until it finishes: once the node is
   * removed its shards are reachable again in principle, but the attempt is still retrying.
   */
  private int waitingOnUnreachable() {
    running.forEach(
        (workerId, item) -> {
          if (!reachable.test(item)) {
            waiting.add(workerId);
          }
        });
    return Math.min(waiting.size(), capacity);
  }

  /** Asks each dispatcher without an open request for a share of the free capacity. */
  private void requestWork() {
    if (leaving.get()) {
      return;
    }
    int outstanding = requested.values().stream().mapToInt(Integer::intValue).sum();
    int free = capacity - (inFlight - waitingOnUnreachable()) - outstanding;
    if (free <= 0) {
      return;
    }
    List<ActorRef<ToDispatcher>> idle = new ArrayList<>();
    requested.forEach(
        (dispatcher, open) -> {
          if (open == 0) {
            idle.add(dispatcher);
          }
        });
    if (idle.isEmpty()) {
      return;
    }
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
  }
}

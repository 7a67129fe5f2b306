package io.fencekeeper.run;

import io.fencekeeper.Stages;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.worker.AttemptResult;
import io.fencekeeper.worker.WorkProtocol;
import io.fencekeeper.worker.WorkProtocol.NothingNow;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;

/**
 * The lease API's claim-next (docs/external-workers.md): the next item of a running run, claimed
 * for an external worker from the run's dispatchers, this node's first; or why there is none now.
 * With a request id, the item granted is written down before it is asked ({@link LeaseRequests}),
 * so the same request repeated after a lost answer, on any node, asks the same item, which answers
 * with the same lease. The dispatcher keeps an item it handed out here in flight until the lease
 * runs out, so the external worker's outcome is learnt from the item itself.
 */
public final class ClaimNext {

  /** What claim-next found: a lease, or nothing now and why. */
  public sealed interface Answer permits Granted, Nothing {}

  public record Granted(WorkItem.Claimed claimed) implements Answer {}

  /**
   * Nothing now: {@code why} (the dispatchers' answers together) and how long to wait before asking
   * again (zero when drained).
   */
  public record Nothing(NothingNow why, Duration retryAfter) implements Answer {}

  /** An item that could not be claimed for a request is followed by at most this many others. */
  private static final int TRIES = 5;

  /** How often a node deletes the requests older than the longest lease. */
  private static final Duration FORGET_EVERY = Duration.ofMinutes(1);

  private final ActorSystem<?> system;
  private final ItemGateway items;
  private final LeaseRequests requests;
  private final Executor blocking;
  private final Duration askTimeout;
  private final Clock clock;
  private final Duration maxLease;
  private final AtomicLong lastForget = new AtomicLong();

  ClaimNext(
      ActorSystem<?> system,
      ItemGateway items,
      LeaseRequests requests,
      Executor blocking,
      Duration askTimeout,
      Clock clock,
      Duration maxLease) {
    this.system = system;
    this.items = items;
    this.requests = requests;
    this.blocking = blocking;
    this.askTimeout = askTimeout;
    this.clock = clock;
    this.maxLease = maxLease;
  }

  /** One claim-next of {@code workerId}; {@code requestId} null: not retryable. */
  CompletionStage<Answer> claim(
      String runId, String workerId, Duration lease, int maxAttempts, String requestId) {
    if (requestId == null) {
      return fromDispatchers(new Request(runId, workerId, lease, null), null, 1);
    }
    Request request = new Request(runId, workerId, lease, requestId);
    forgetOldRequests();
    return pointed(request, maxAttempts, 1);
  }

  private record Request(String runId, String workerId, Duration lease, String requestId) {}

  /** The item the request was pointed at, asked first; a new one if none or it is gone. */
  private CompletionStage<Answer> pointed(Request r, int maxAttempts, int restarts) {
    return CompletableFuture.supplyAsync(
            () -> requests.find(r.runId(), r.workerId(), r.requestId()), blocking)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return fromDispatchers(r, null, restarts);
              }
              return items
                  .claim(found.get(), r.workerId(), r.lease(), maxAttempts, r.requestId())
                  .thenCompose(
                      reply ->
                          reply instanceof WorkItem.Claimed claimed
                              ? CompletableFuture.completedFuture((Answer) new Granted(claimed))
                              // the lease it named ended (taken over, done): another item
                              : fromDispatchers(r, found.get(), restarts));
            });
  }

  private CompletionStage<Answer> fromDispatchers(Request r, ItemId previous, int restarts) {
    var key = WorkProtocol.serviceKeyOf(r.runId());
    return Stages.on(
            AskPattern.<Receptionist.Command, Receptionist.Listing>ask(
                system.receptionist(),
                replyTo -> Receptionist.find(key, replyTo),
                askTimeout,
                system.scheduler()),
            system.executionContext())
        .thenCompose(
            listing ->
                claimFrom(
                    localFirst(listing.getServiceInstances(key)),
                    r,
                    previous,
                    TRIES,
                    new ArrayList<>(),
                    restarts));
  }

  /**
   * Every node dispatches the run's items it hosts: this node's dispatcher first (the claim stays
   * on the node), then the others'.
   */
  private static List<ActorRef<WorkProtocol.ToDispatcher>> localFirst(
      Set<ActorRef<WorkProtocol.ToDispatcher>> dispatchers) {
    List<ActorRef<WorkProtocol.ToDispatcher>> ordered = new ArrayList<>(dispatchers);
    ordered.sort(
        Comparator.comparing(
            (ActorRef<WorkProtocol.ToDispatcher> d) -> !d.path().address().hasLocalScope()));
    return ordered;
  }

  private CompletionStage<Answer> claimFrom(
      List<ActorRef<WorkProtocol.ToDispatcher>> dispatchers,
      Request r,
      ItemId previous,
      int triesLeft,
      List<WorkProtocol.WorkBatch> empties,
      int restarts) {
    if (triesLeft == 0 || dispatchers.isEmpty()) {
      return CompletableFuture.completedFuture(nothing(empties, clock.instant()));
    }
    ActorRef<WorkProtocol.ToDispatcher> dispatcher = dispatchers.get(0);
    return Stages.on(
            AskPattern.<WorkProtocol.ToDispatcher, WorkProtocol.WorkBatch>ask(
                dispatcher,
                replyTo -> new WorkProtocol.RequestWork(1, true, replyTo),
                askTimeout,
                system.scheduler()),
            system.executionContext())
        .thenCompose(
            batch -> {
              if (batch.offers().isEmpty()) {
                // nothing on this node's shards now: the next node's dispatcher
                empties.add(batch);
                return claimFrom(
                    dispatchers.subList(1, dispatchers.size()),
                    r,
                    previous,
                    triesLeft,
                    empties,
                    restarts);
              }
              WorkProtocol.WorkOffer offer = batch.offers().get(0);
              return pointAt(r, previous, offer.itemId())
                  .thenCompose(
                      mine -> {
                        if (!mine) {
                          // the same request, sent again, reached another node first: its item
                          // is this request's
                          giveBack(dispatcher, offer);
                          return restarts > 0
                              ? pointed(r, offer.maxAttempts(), restarts - 1)
                              : CompletableFuture.completedFuture(
                                  (Answer) new Nothing(NothingNow.WAITING, Duration.ofSeconds(1)));
                        }
                        return items
                            .claim(
                                offer.itemId(),
                                r.workerId(),
                                r.lease(),
                                offer.maxAttempts(),
                                r.requestId())
                            .thenCompose(
                                reply -> {
                                  if (reply instanceof WorkItem.Claimed claimed) {
                                    return CompletableFuture.completedFuture(
                                        (Answer) new Granted(claimed));
                                  }
                                  // not claimable after all: the dispatcher learns why, and the
                                  // next offer is tried
                                  dispatcher.tell(
                                      new WorkProtocol.Settled(
                                          offer.seq(),
                                          AttemptResult.ofClaimAnswer(reply, clock.instant())));
                                  return claimFrom(
                                      dispatchers,
                                      r,
                                      r.requestId() == null ? null : offer.itemId(),
                                      triesLeft - 1,
                                      empties,
                                      restarts);
                                });
                      });
            });
  }

  /**
   * Writes the request's item down before the item is asked; true when this claim may ask it (no
   * request id, or the request now points at it).
   */
  private CompletionStage<Boolean> pointAt(Request r, ItemId previous, ItemId item) {
    if (r.requestId() == null) {
      return CompletableFuture.completedFuture(true);
    }
    Instant now = clock.instant();
    return CompletableFuture.supplyAsync(
        () ->
            previous == null
                ? requests.point(r.runId(), r.workerId(), r.requestId(), item, now)
                : requests.move(r.runId(), r.workerId(), r.requestId(), previous, item, now),
        blocking);
  }

  /** An offer not asked: back to the dispatcher, ready at once. */
  private void giveBack(ActorRef<WorkProtocol.ToDispatcher> dispatcher, WorkProtocol.WorkOffer o) {
    dispatcher.tell(new WorkProtocol.Settled(o.seq(), new AttemptResult.RetryAt(clock.instant())));
  }

  /**
   * The dispatchers' empty answers together: the cap reached on any node is what holds work back;
   * else anything waiting; else, when every dispatcher has nothing open, drained. No dispatcher at
   * all (the run is starting, or its nodes are moving): waiting, a second.
   */
  static Nothing nothing(List<WorkProtocol.WorkBatch> empties, Instant now) {
    Instant second = now.plus(Duration.ofSeconds(1));
    if (empties.isEmpty()) {
      return new Nothing(NothingNow.WAITING, Duration.ofSeconds(1));
    }
    NothingNow why = NothingNow.DRAINED;
    Instant retryAt = null;
    for (WorkProtocol.WorkBatch empty : empties) {
      NothingNow said = empty.nothingNow() == null ? NothingNow.WAITING : empty.nothingNow();
      if (said == NothingNow.DRAINED) {
        continue;
      }
      Instant at = empty.retryAt() == null ? second : empty.retryAt();
      if (why == NothingNow.DRAINED || said.compareTo(why) < 0) {
        why = said;
      }
      retryAt = retryAt == null || at.isBefore(retryAt) ? at : retryAt;
    }
    if (why == NothingNow.DRAINED) {
      return new Nothing(why, Duration.ZERO);
    }
    Duration wait = Duration.between(now, retryAt);
    return new Nothing(why, wait.isNegative() ? Duration.ZERO : wait);
  }

  /** At most once a minute, as claims come: the requests whose leases have lapsed by now. */
  private void forgetOldRequests() {
    long now = clock.millis();
    long last = lastForget.get();
    if (now - last < FORGET_EVERY.toMillis() || !lastForget.compareAndSet(last, now)) {
      return;
    }
    Instant cutoff = clock.instant().minus(maxLease).minus(FORGET_EVERY);
    CompletableFuture.runAsync(() -> requests.forgetBefore(cutoff), blocking)
        .exceptionally(failure -> null); // the next minute's claim tries again
  }
}

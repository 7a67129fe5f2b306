package io.fencekeeper.dispatch;

import io.fencekeeper.item.ItemId;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.function.IntPredicate;
import java.util.function.Predicate;
import org.apache.pekko.actor.Address;

/**
 * The items of a run a node's dispatcher holds in memory: ready to hand out, parked until a time
 * (retry back-off, someone else's lease, a lost attempt's lease), or offered to a worker pool and
 * not yet settled. Everything else of the run stays in {@code run_item} until it is paged in.
 */
final class WorkQueue {

  /** An item of the run, its place in the scope and its shard. */
  record Ref(int seq, ItemId itemId, int shard) {}

  private record Parked(Instant until, Ref ref) {}

  /**
   * {@code member}: the node of the pool that took it; {@code heardAt}: when its holder last showed
   * it still works on it (the offer, or the lease renewal its item last answered with).
   */
  private record Offer(Ref ref, Instant heardAt, Address member) {}

  private final StatusBoard board;
  private final ArrayDeque<Ref> ready = new ArrayDeque<>();
  private final PriorityQueue<Parked> parked =
      new PriorityQueue<>(Comparator.comparing(Parked::until));
  private final Map<Integer, Offer> offered = new HashMap<>();

  WorkQueue(StatusBoard board) {
    this.board = board;
  }

  void ready(Ref ref) {
    board.mark(ref.seq(), StatusBoard.READY);
    ready.add(ref);
  }

  /**
   * Items that come back (a due retry, an offer its pool never answered, the items of a shard whose
   * node left) were handed out before: they go ahead of items never tried, so an item whose holder
   * vanished is claimed again once its lease expires, not after the rest of the backlog. {@code
   * refs} keep their order at the front.
   */
  void readyFirst(List<Ref> refs) {
    for (int i = refs.size() - 1; i >= 0; i--) {
      board.mark(refs.get(i).seq(), StatusBoard.READY);
      ready.addFirst(refs.get(i));
    }
  }

  /** Keeps the item out of dispatch until {@code until}. */
  void park(Ref ref, Instant until) {
    board.mark(ref.seq(), StatusBoard.WAITING);
    parked.add(new Parked(until, ref));
  }

  /** Parked items whose time has come are ready again. */
  void releaseDue(Instant now) {
    List<Ref> due = new ArrayList<>();
    while (!parked.isEmpty() && !parked.peek().until().isAfter(now)) {
      Ref ref = parked.poll().ref();
      if (board.get(ref.seq()) == StatusBoard.WAITING) {
        due.add(ref);
      }
    }
    readyFirst(due);
  }

  /** Up to {@code max} ready items, now offered to a pool on {@code member}. */
  List<Ref> take(int max, Instant now, Address member) {
    List<Ref> taken = new ArrayList<>(Math.min(max, ready.size()));
    while (taken.size() < max && !ready.isEmpty()) {
      Ref ref = ready.poll();
      if (board.get(ref.seq()) != StatusBoard.READY) {
        continue; // settled by a report from an older offer
      }
      board.mark(ref.seq(), StatusBoard.OFFERED);
      offered.put(ref.seq(), new Offer(ref, now, member));
      taken.add(ref);
    }
    return taken;
  }

  /**
   * The items of shards this node no longer hosts leave the queue (their new host dispatches them);
   * their offers stay until they settle. They are READY on the board again, so that paging their
   * shard anew (if it comes back) queues them.
   */
  int dropShards(IntPredicate hosted) {
    int dropped = 0;
    Iterator<Ref> it = ready.iterator();
    while (it.hasNext()) {
      Ref ref = it.next();
      if (!hosted.test(ref.shard())) {
        it.remove();
        dropped++;
      }
    }
    List<Parked> gone = new ArrayList<>();
    parked.removeIf(
        p -> {
          boolean away = !hosted.test(p.ref().shard());
          if (away) {
            gone.add(p);
          }
          return away;
        });
    for (Parked p : gone) {
      if (board.get(p.ref().seq()) == StatusBoard.WAITING) {
        board.mark(p.ref().seq(), StatusBoard.READY);
        dropped++;
      }
    }
    return dropped;
  }

  /**
   * Offers taken by pools on members that are gone (unreachable): their items go ahead of the
   * others at once rather than after the lease and grace. A claim tells the truth: if the gone
   * worker's lease still runs, the item waits for exactly that lease, then it is taken over.
   */
  int expireOffersTo(Predicate<Address> gone) {
    return expireOffers(offer -> gone.test(offer.member()));
  }

  /**
   * The offers not heard of since before {@code before}: the dispatcher asks their items whether a
   * lease on them still runs. Each counts as heard of {@code now} until the item answers, so that
   * it is asked once per silence, not once per tick.
   */
  List<Ref> silentSince(Instant before, Instant now) {
    List<Ref> silent = new ArrayList<>();
    for (var entry : offered.entrySet()) {
      Offer offer = entry.getValue();
      if (offer.heardAt().isBefore(before)) {
        entry.setValue(new Offer(offer.ref(), now, offer.member()));
        silent.add(offer.ref());
      }
    }
    silent.sort(Comparator.comparingInt(Ref::seq));
    return silent;
  }

  /**
   * The item of offer {@code seq}, asked at {@code askedAt}, answered that its lease was renewed at
   * {@code renewedAt}. Nothing changes when the offer asked about has settled meanwhile (a later
   * offer of the same item is not the one asked about).
   */
  void heardOf(int seq, Instant askedAt, Instant renewedAt) {
    offered.computeIfPresent(
        seq,
        (k, offer) ->
            offer.heardAt().equals(askedAt)
                ? new Offer(offer.ref(), renewedAt, offer.member())
                : offer);
  }

  /**
   * Offer {@code seq}, asked about at {@code askedAt}, goes back to ready: nobody renews its lease,
   * so the pool that took it is gone or stuck, and the item's claim tells the truth when it is
   * offered again.
   */
  boolean takeBack(int seq, Instant askedAt) {
    Offer offer = offered.get(seq);
    if (offer == null || !offer.heardAt().equals(askedAt)) {
      return false;
    }
    offered.remove(seq);
    if (board.get(seq) != StatusBoard.OFFERED) {
      return false;
    }
    readyFirst(List.of(offer.ref()));
    return true;
  }

  private int expireOffers(Predicate<Offer> expired) {
    List<Ref> back = new ArrayList<>();
    Iterator<Offer> it = offered.values().iterator();
    while (it.hasNext()) {
      Offer offer = it.next();
      if (expired.test(offer)) {
        it.remove();
        if (board.get(offer.ref().seq()) == StatusBoard.OFFERED) {
          back.add(offer.ref());
        }
      }
    }
    back.sort(Comparator.comparingInt(Ref::seq));
    readyFirst(back);
    return back.size();
  }

  /** The offer of item {@code seq} came back; empty when it was not (or no longer) offered. */
  Optional<Ref> settle(int seq) {
    Offer offer = offered.remove(seq);
    return offer == null ? Optional.empty() : Optional.of(offer.ref());
  }

  /**
   * Item {@code itemId}, if it is ready or parked here, leaves the queue: it was settled without
   * being offered from here (the lease API's claim by id). Empty when it is not queued here.
   */
  Optional<Ref> forget(ItemId itemId) {
    for (Iterator<Ref> it = ready.iterator(); it.hasNext(); ) {
      Ref ref = it.next();
      if (ref.itemId().equals(itemId)) {
        it.remove();
        return Optional.of(ref);
      }
    }
    for (Iterator<Parked> it = parked.iterator(); it.hasNext(); ) {
      Parked p = it.next();
      if (p.ref().itemId().equals(itemId)) {
        it.remove();
        return Optional.of(p.ref());
      }
    }
    return Optional.empty();
  }

  /** The seq of item {@code itemId} if it is in flight from this dispatcher. */
  Optional<Integer> offeredSeqOf(ItemId itemId) {
    for (Offer offer : offered.values()) {
      if (offer.ref().itemId().equals(itemId)) {
        return Optional.of(offer.ref().seq());
      }
    }
    return Optional.empty();
  }

  /** The seqs of the items in flight from this dispatcher, in order. */
  List<Integer> inFlightSeqs() {
    return offered.keySet().stream().sorted().toList();
  }

  /** Offered and not settled: the run's items in flight from this dispatcher. */
  int inFlight() {
    return offered.size();
  }

  int readyCount() {
    return ready.size();
  }

  boolean hasReady() {
    return !ready.isEmpty();
  }

  /** How many parked items are due by {@code by}. */
  int parkedDueBy(Instant by) {
    int due = 0;
    for (Parked p : parked) {
      if (!p.until().isAfter(by)) {
        due++;
      }
    }
    return due;
  }

  /** When the first parked item is due, if any is parked. */
  Optional<Instant> nextDue() {
    Parked first = parked.peek();
    return first == null ? Optional.empty() : Optional.of(first.until());
  }

  /** Whether anything is parked until a time. */
  boolean hasParked() {
    return !parked.isEmpty();
  }

  /** When the longest-waiting parked item became due, if one is overdue at {@code now}. */
  Optional<Instant> overdueSince(Instant now) {
    Parked first = parked.peek();
    return first != null && !first.until().isAfter(now)
        ? Optional.of(first.until())
        : Optional.empty();
  }

  /** Stopping: nothing more is handed out; offers stay until they settle. */
  void clearWaiting() {
    ready.clear();
    parked.clear();
  }
}

package io.fencekeeper.run;

import io.fencekeeper.item.ItemId;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.pekko.actor.Address;

/**
 * The items of a run the dispatcher holds in memory: ready to hand out, parked until a time (retry
 * back-off, someone else's lease, a lost attempt's lease), or offered to a worker pool and not yet
 * settled. Everything else of the run stays in {@code run_item} until it is paged in.
 */
final class WorkQueue {

  /** An item of the run and its place in the scope. */
  record Ref(int seq, ItemId itemId) {}

  private record Parked(Instant until, Ref ref) {}

  /** {@code member}: the node of the pool that took it. */
  private record Offer(Ref ref, Instant at, Address member) {}

  private final StatusBoard board;
  private final ArrayDeque<Ref> ready = new ArrayDeque<>();
  private final PriorityQueue<Parked> parked =
      new PriorityQueue<>(Comparator.comparing(Parked::until));
  private final Map<Integer, Offer> offered = new HashMap<>();
  // items whose shard's node does not answer: handed out again once it does (or is gone)
  private final List<Ref> blocked = new ArrayList<>();
  // items that came back to the front (handed out before: a dead pool's offers, due retries), by
  // seq, until taken: put aside, they still go first when they can (their takeover is due)
  private final Set<Integer> returning = new HashSet<>();
  // offers whose item's node stopped answering while they were out, by seq (a subset of offered)
  private final Set<Integer> waiting = new HashSet<>();

  WorkQueue(StatusBoard board) {
    this.board = board;
  }

  void ready(Ref ref) {
    board.mark(ref.seq(), StatusBoard.READY);
    ready.add(ref);
  }

  /**
   * Items that come back (a due retry, an offer its pool never answered) were handed out before:
   * they go ahead of items never tried, so a dead node's items are claimed again once their leases
   * expire, not after the rest of the backlog. {@code refs} keep their order at the front.
   */
  private void readyFirst(List<Ref> refs) {
    for (int i = refs.size() - 1; i >= 0; i--) {
      board.mark(refs.get(i).seq(), StatusBoard.READY);
      ready.addFirst(refs.get(i));
      returning.add(refs.get(i).seq());
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

  /**
   * Up to {@code max} ready items, now offered to a pool on {@code member}; items settled meanwhile
   * are skipped, and items whose shard cannot answer now are put aside until it can: a worker would
   * only wait on them while items on healthy shards wait for a worker.
   */
  List<Ref> take(int max, Instant now, Address member, Predicate<Ref> reachable) {
    List<Ref> taken = new ArrayList<>(Math.min(max, ready.size()));
    while (taken.size() < max && !ready.isEmpty()) {
      Ref ref = ready.poll();
      boolean returned = returning.remove(ref.seq());
      if (board.get(ref.seq()) != StatusBoard.READY) {
        continue; // settled by a report from an older offer
      }
      if (!reachable.test(ref)) {
        if (returned) {
          returning.add(ref.seq()); // remembered while it waits aside
        }
        board.mark(ref.seq(), StatusBoard.WAITING);
        blocked.add(ref);
        continue;
      }
      board.mark(ref.seq(), StatusBoard.OFFERED);
      offered.put(ref.seq(), new Offer(ref, now, member));
      taken.add(ref);
    }
    return taken;
  }

  /**
   * Items put aside for their shard that can be reached again join the back of the ready items:
   * when a dead node is removed, its shards are allocated anew one claim at a time, and handing all
   * of its items out first would fill every worker with claims waiting on those allocations. Items
   * that had come back to the front (a dead pool's offers: their takeover is due) go first.
   */
  int releaseReachable(Predicate<Ref> reachable) {
    List<Ref> first = new ArrayList<>();
    List<Ref> back = new ArrayList<>();
    Iterator<Ref> it = blocked.iterator();
    while (it.hasNext()) {
      Ref ref = it.next();
      if (board.get(ref.seq()) != StatusBoard.WAITING) {
        it.remove(); // settled meanwhile
        returning.remove(ref.seq());
      } else if (reachable.test(ref)) {
        it.remove();
        (returning.remove(ref.seq()) ? first : back).add(ref);
      }
    }
    readyFirst(first);
    back.forEach(this::ready);
    return first.size() + back.size();
  }

  /** Items put aside until their shard answers. */
  int blockedCount() {
    return blocked.size();
  }

  /**
   * Offers taken by pools on members that are gone (unreachable): their items go ahead of the
   * others at once rather than after the lease and grace. A claim tells the truth: if the gone
   * worker's lease still runs, the item waits for exactly that lease, then it is taken over.
   */
  int expireOffersTo(Predicate<Address> gone) {
    List<Ref> lost = new ArrayList<>();
    Iterator<Offer> it = offered.values().iterator();
    while (it.hasNext()) {
      Offer offer = it.next();
      if (gone.test(offer.member())) {
        it.remove();
        waiting.remove(offer.ref().seq());
        if (board.get(offer.ref().seq()) == StatusBoard.OFFERED) {
          lost.add(offer.ref());
        }
      }
    }
    lost.sort(Comparator.comparingInt(Ref::seq));
    readyFirst(lost);
    return lost.size();
  }

  /**
   * Offers a worker is really busy with: not those whose item could not be reached at some point
   * while they were out. Such a worker waits on its item's node, and it stays set aside until its
   * offer settles: when the node is removed its shards answer from a new home a little later, and
   * counting the waiting workers again at that moment would fill the cap with workers that are
   * still retrying (they have at most a lookup left at the provider).
   */
  int inFlight(Predicate<Ref> reachable) {
    for (Offer offer : offered.values()) {
      if (!reachable.test(offer.ref())) {
        waiting.add(offer.ref().seq());
      }
    }
    return offered.size() - waiting.size();
  }

  /** The offer of item {@code seq} came back; empty when it was not (or no longer) offered. */
  Optional<Ref> settle(int seq) {
    waiting.remove(seq);
    Offer offer = offered.remove(seq);
    return offer == null ? Optional.empty() : Optional.of(offer.ref());
  }

  /**
   * Offers made before {@code before} go back to ready: the pool that took them is gone or stuck,
   * and the item's claim tells the truth when it is offered again.
   */
  int expireOffersBefore(Instant before) {
    List<Ref> expired = new ArrayList<>();
    Iterator<Offer> it = offered.values().iterator();
    while (it.hasNext()) {
      Offer offer = it.next();
      if (offer.at().isBefore(before)) {
        it.remove();
        waiting.remove(offer.ref().seq());
        if (board.get(offer.ref().seq()) == StatusBoard.OFFERED) {
          expired.add(offer.ref());
        }
      }
    }
    expired.sort(Comparator.comparingInt(Ref::seq));
    readyFirst(expired);
    return expired.size();
  }

  /** Offered and not settled: the run's items in flight. */
  int inFlight() {
    return offered.size();
  }

  int readyCount() {
    return ready.size();
  }

  boolean hasReady() {
    return !ready.isEmpty();
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
    blocked.clear();
    returning.clear();
  }
}

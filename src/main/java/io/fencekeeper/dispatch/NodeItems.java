package io.fencekeeper.dispatch;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.worker.AttemptResult;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.function.Predicate;

/**
 * A run's items as one node's dispatcher knows them, and the rules for what happens to an item when
 * it is paged in, handed out, comes back or is quarantined: the {@link StatusBoard} (one byte per
 * item), the {@link WorkQueue} (what is in memory), the {@link ShardTallies} (per shard, what is
 * settled) and the {@link QuarantinedItems}. No Pekko here: the dispatcher carries the messages.
 * {@code keep} says whether an item that is still open stays with this dispatcher (its shard is
 * hosted here and the run is not stopping); one that does not is left READY on the board, for its
 * shard's next host or the close sweep.
 */
final class NodeItems {

  /** How long an item whose claim went unanswered waits (its shard moving, a node overloaded). */
  static final Duration UNANSWERED_WAIT = Duration.ofSeconds(5);

  final StatusBoard board;
  final WorkQueue queue;
  final ShardTallies tallies;
  final QuarantinedItems quarantined;

  // items whose leases a lost node held, not paged in here yet: offered first if their shard comes
  private final Set<Integer> lostLeases = new HashSet<>();

  // the open items of shards that arrived, held until every arrival is paged in (a page is a few
  // milliseconds): then queued ahead of the backlog in the order their leases are likely to be due
  private final List<WorkQueue.Ref> arrivedLeased = new ArrayList<>();
  private final List<WorkQueue.Ref> arrivedWorkedOn = new ArrayList<>();
  private final List<WorkQueue.Ref> arrivedUntouched = new ArrayList<>();

  NodeItems(int count) {
    this.board = new StatusBoard(count);
    this.queue = new WorkQueue(board);
    this.tallies = new ShardTallies(count);
    this.quarantined = new QuarantinedItems(board);
  }

  /**
   * The item of offer {@code seq}, silent since a lease and a grace and asked about at {@code
   * askedAt}, answered {@code reply} (null: no answer). The offer is either an attempt that runs
   * long (its worker renews the lease: it stays in flight, counted in the slice, and is asked about
   * again a lease and a grace after the renewal) or one whose pool is gone or stuck (nobody renews:
   * it goes back to ready, ahead of the rest). Answers whether it went back.
   */
  boolean offerChecked(
      int seq, Instant askedAt, WorkItem.Reply reply, Instant now, Duration lease) {
    if (reply instanceof WorkItem.Accepted a
        && a.item().status() == WorkItem.Status.LEASED
        && a.item().leaseExpiresAt() != null
        && a.item().leaseExpiresAt().isAfter(now)) {
      // renewed a lease before its expiry (by its host's clock: never later than now here)
      Instant renewedAt = a.item().leaseExpiresAt().minus(lease);
      queue.heardOf(seq, askedAt, renewedAt.isAfter(now) ? now : renewedAt);
      return false;
    }
    return queue.takeBack(seq, askedAt);
  }

  /** Items (by seq) whose leases a node that was removed held; their shards arrive later. */
  void lostLeases(List<Integer> seqs) {
    lostLeases.addAll(seqs);
  }

  /**
   * A page of a hosted shard's rows: an item whose cached status is DONE or FAILED is settled (no
   * write back), the others are queued. When the shard {@code arrived} from a node that left, its
   * open items are held for {@link #arrivalsPaged}, since its old node's leases among them are due
   * for a takeover. Answers the items to reopen first: all open ones of a resumed run, and the ones
   * the deadline CLOSED.
   */
  List<WorkQueue.Ref> intake(RunWork run, int shard, List<ScopeRows.Row> rows, boolean arrived) {
    List<WorkQueue.Ref> reopen = new ArrayList<>();
    List<WorkQueue.Ref> leased = new ArrayList<>();
    List<WorkQueue.Ref> first = new ArrayList<>();
    boolean workedOn = false;
    for (ScopeRows.Row row : rows) {
      workedOn |= row.status() == ScopeRows.DONE || row.status() == ScopeRows.FAILED;
      int seq = row.seq();
      boolean lostLease = lostLeases.remove(seq);
      tallies.place(seq, shard);
      if (board.get(seq) != StatusBoard.READY) {
        continue; // known already: in flight, waiting, or settled
      }
      WorkQueue.Ref ref = new WorkQueue.Ref(seq, run.itemId(row.accountId(), row.cursor()), shard);
      if (row.status() == ScopeRows.DONE) {
        settle(seq, StatusBoard.DONE, false);
      } else if (run.resumes() > 0 || row.status() == ScopeRows.CLOSED) {
        board.mark(seq, StatusBoard.WAITING); // until the item answers its Reopen
        reopen.add(ref);
      } else if (row.status() == ScopeRows.FAILED) {
        settle(seq, StatusBoard.FAILED, false);
      } else if (row.status() == ScopeRows.QUARANTINED) {
        // quarantined through the lease API: out of dispatch, looked up like any quarantined item
        quarantine(ref);
      } else if (arrived && lostLease) {
        leased.add(ref);
      } else if (arrived) {
        first.add(ref);
      } else {
        queue.ready(ref);
      }
    }
    arrivedLeased.addAll(leased);
    (workedOn ? arrivedWorkedOn : arrivedUntouched).addAll(first);
    return reopen;
  }

  /**
   * Every shard that arrived is paged in: their open items go ahead of the backlog. First the ones
   * whose leases the lost node last reported, then the open items of the shards it had settled some
   * of (it was working on them: the items it held when it was lost are among their first open ones,
   * reported or not), then the shards it had not settled any of. A leased item is claimed early
   * that way, told how long its lease still runs, and taken over when it ends, not after the rest
   * of the arrivals. Items whose shard no longer stays here are left READY on the board.
   */
  void arrivalsPaged(Predicate<WorkQueue.Ref> keep) {
    List<WorkQueue.Ref> arrivals = new ArrayList<>(arrivedLeased);
    arrivals.addAll(arrivedWorkedOn);
    arrivals.addAll(arrivedUntouched);
    arrivedLeased.clear();
    arrivedWorkedOn.clear();
    arrivedUntouched.clear();
    queue.readyFirst(
        arrivals.stream()
            .filter(ref -> board.get(ref.seq()) == StatusBoard.READY && keep.test(ref))
            .toList());
  }

  /** A reopened item answered: DONE stays done; otherwise it is handed out, the claim decides. */
  void reopened(WorkQueue.Ref ref, boolean done, Predicate<WorkQueue.Ref> keep) {
    if (done) {
      settle(ref.seq(), StatusBoard.DONE, true);
    } else if (board.get(ref.seq()) == StatusBoard.WAITING) {
      if (keep.test(ref)) {
        queue.ready(ref);
      } else {
        board.mark(ref.seq(), StatusBoard.READY);
      }
    }
  }

  /**
   * How an attempt at item {@code seq} ended. Answers the reason when the item is newly quarantined
   * (its last holders vanished: the dispatcher logs it).
   */
  Optional<String> settled(
      int seq, AttemptResult result, Instant now, Duration lease, Predicate<WorkQueue.Ref> keep) {
    Optional<WorkQueue.Ref> offer = queue.settle(seq);
    if (result instanceof AttemptResult.Done) {
      settle(seq, StatusBoard.DONE, true);
    } else if (result instanceof AttemptResult.Failed) {
      settle(seq, StatusBoard.FAILED, true);
    } else if (result instanceof AttemptResult.Closed) {
      settle(seq, StatusBoard.CLOSED, true);
    } else if (result instanceof AttemptResult.Quarantined q) {
      return offer.filter(this::quarantine).map(ref -> q.reason());
    } else if (result instanceof AttemptResult.RetryAt r) {
      offer.ifPresent(ref -> park(ref, r.at(), keep));
    } else if (result instanceof AttemptResult.Held h) {
      // the expiry by the item's host's clock: one ahead of this one must not park the item for
      // longer than a lease (a claim then answers again)
      Instant leaseAtMost = now.plus(lease);
      Instant until = h.until().isAfter(leaseAtMost) ? leaseAtMost : h.until();
      offer.ifPresent(ref -> park(ref, until, keep));
    } else if (result instanceof AttemptResult.Unanswered) {
      offer.ifPresent(ref -> park(ref, now.plus(UNANSWERED_WAIT), keep));
    } else {
      // lost or no answer: whoever holds it now reports, or its lease runs out
      offer.ifPresent(ref -> park(ref, now.plus(lease), keep));
    }
    return Optional.empty();
  }

  /**
   * Item {@code itemId}, which this dispatcher did not hand out, was settled through the lease API
   * (a claim by id, then complete or fail, or a claim that found it FAILED or quarantined). If it
   * is queued here it leaves the queue and is counted where it stands; one not paged in yet reads
   * its status from {@code run_item}, where the API wrote it first. An item offered from here
   * settles by its offer instead ({@link #settled}). Answers whether anything changed.
   */
  boolean settledElsewhere(ItemId itemId, AttemptResult result) {
    boolean counts =
        result instanceof AttemptResult.Done
            || result instanceof AttemptResult.Failed
            || result instanceof AttemptResult.Quarantined;
    if (!counts) {
      return false; // still open: whoever hands it out next learns the rest from its claim
    }
    Optional<WorkQueue.Ref> queued = queue.forget(itemId);
    if (queued.isEmpty()) {
      return false;
    }
    WorkQueue.Ref ref = queued.get();
    if (result instanceof AttemptResult.Done) {
      settle(ref.seq(), StatusBoard.DONE, true);
    } else if (result instanceof AttemptResult.Failed) {
      settle(ref.seq(), StatusBoard.FAILED, true);
    } else {
      quarantine(ref);
    }
    return true;
  }

  private void park(WorkQueue.Ref ref, Instant until, Predicate<WorkQueue.Ref> keep) {
    if (keep.test(ref)) {
      queue.park(ref, until);
    } else {
      board.mark(ref.seq(), StatusBoard.READY);
    }
  }

  void settle(int seq, byte terminal, boolean write) {
    byte before = board.get(seq);
    boolean changed = write ? board.settle(seq, terminal) : board.settleCached(seq, terminal);
    if (changed) {
      tallies.moved(seq, before, terminal);
      queue.settle(seq);
      quarantined.remove(seq);
    }
  }

  /**
   * The item's last holders vanished (a poison item): out of dispatch until an operator retries it.
   * It is not settled, so the run does not end without it: at the deadline it counts as not done.
   */
  private boolean quarantine(WorkQueue.Ref ref) {
    byte before = board.get(ref.seq());
    if (!board.isOpen(ref.seq()) || !quarantined.add(ref)) {
      return false;
    }
    tallies.moved(ref.seq(), before, StatusBoard.QUARANTINED);
    return true;
  }

  /**
   * A quarantined item answered its look-up: no longer quarantined (an operator retried it, or a
   * lost holder came back), it is handed out again.
   */
  void quarantineAnswered(WorkQueue.Ref ref, boolean stillQuarantined) {
    quarantined.answered();
    if (stillQuarantined || board.get(ref.seq()) != StatusBoard.QUARANTINED) {
      return;
    }
    quarantined.remove(ref.seq());
    tallies.moved(ref.seq(), StatusBoard.QUARANTINED, StatusBoard.READY);
    queue.ready(ref);
  }

  /** Nothing here is open but what waits for a time: settled, quarantined or paged out. */
  boolean idle() {
    return !queue.hasReady() && queue.inFlight() == 0 && !queue.hasParked();
  }

  /** The tallies of the shards {@code hosted} says this node hosts. */
  List<DispatchProtocol.ShardTally> tallies(IntPredicate hosted) {
    return tallies.of(hosted);
  }
}

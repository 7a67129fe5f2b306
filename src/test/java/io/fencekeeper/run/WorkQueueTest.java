package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.junit.jupiter.api.Test;

/**
 * What the dispatcher holds in memory: items ready to hand out, parked until a time, and offered to
 * a pool; an item settled by another path is never handed out again.
 */
class WorkQueueTest {

  static final Instant T = Instant.parse("2026-11-30T02:00:00Z");

  final StatusBoard board = new StatusBoard(10);
  final WorkQueue queue = new WorkQueue(board);

  static WorkQueue.Ref ref(int seq) {
    return new WorkQueue.Ref(
        seq, ItemId.of("nightly", LocalDate.parse("2026-11-29"), "a" + seq, "c"));
  }

  static List<Integer> seqs(List<WorkQueue.Ref> refs) {
    return refs.stream().map(WorkQueue.Ref::seq).toList();
  }

  static final Address POOL = new Address("pekko", "fencekeeper", "10.0.0.1", 25520);

  /** Offers to a pool on {@link #POOL}, every shard reachable. */
  List<WorkQueue.Ref> take(int max, Instant now) {
    return queue.take(max, now, POOL, ref -> true);
  }

  void readyAll(int... seqs) {
    for (int seq : seqs) {
      queue.ready(ref(seq));
    }
  }

  @Test
  void takeHandsOutAtMostMaxInOrderAndMarksThemOffered() {
    readyAll(0, 1, 2, 3, 4);

    List<WorkQueue.Ref> taken = take(3, T);

    assertEquals(List.of(0, 1, 2), seqs(taken));
    assertEquals(StatusBoard.OFFERED, board.get(0));
    assertEquals(StatusBoard.READY, board.get(3));
    assertEquals(3, queue.inFlight());
    assertEquals(2, queue.readyCount());
    assertEquals(List.of(3, 4), seqs(take(10, T)));
    assertFalse(queue.hasReady());
  }

  @Test
  void takeSkipsItemsSettledWhileTheyWaitedAndStillFillsMax() {
    readyAll(0, 1, 2, 3);
    board.settle(0, StatusBoard.DONE);
    board.settle(1, StatusBoard.CLOSED);

    List<WorkQueue.Ref> taken = take(2, T);

    assertEquals(List.of(2, 3), seqs(taken));
    assertEquals(StatusBoard.DONE, board.get(0), "a settled item stays settled");
    assertEquals(StatusBoard.CLOSED, board.get(1));
    assertEquals(2, queue.inFlight());
  }

  @Test
  void anItemReadiedTwiceIsOfferedOnce() {
    readyAll(0, 0);

    assertEquals(List.of(0), seqs(take(5, T)));
    assertEquals(1, queue.inFlight());
  }

  @Test
  void aParkedItemStaysOutUntilItsTimeAndReleaseDueBringsItBack() {
    queue.park(ref(0), T.plusSeconds(30));
    assertEquals(StatusBoard.WAITING, board.get(0));
    assertTrue(board.isOpen(0));

    queue.releaseDue(T.plusSeconds(29));
    assertEquals(List.of(), take(5, T.plusSeconds(29)));

    queue.releaseDue(T.plusSeconds(30));
    assertEquals(StatusBoard.READY, board.get(0));
    assertEquals(List.of(0), seqs(take(5, T.plusSeconds(30))));
  }

  @Test
  void parkedItemsComeBackInTheOrderTheyBecomeDue() {
    queue.park(ref(0), T.plusSeconds(20));
    queue.park(ref(1), T.plusSeconds(10));
    queue.park(ref(2), T.plusSeconds(40));

    queue.releaseDue(T.plusSeconds(25));

    assertEquals(List.of(1, 0), seqs(take(5, T.plusSeconds(25))));
    assertEquals(StatusBoard.WAITING, board.get(2));
  }

  @Test
  void aParkedItemSettledMeanwhileIsNotReleased() {
    queue.park(ref(0), T.plusSeconds(5));
    board.settle(0, StatusBoard.DONE);

    queue.releaseDue(T.plusSeconds(5));

    assertEquals(StatusBoard.DONE, board.get(0));
    assertFalse(queue.hasReady());
  }

  @Test
  void settleReturnsTheOfferOnce() {
    readyAll(0, 1);
    take(2, T);

    assertEquals(Optional.of(ref(0)), queue.settle(0));
    assertEquals(Optional.empty(), queue.settle(0), "a repeated report finds no offer");
    assertEquals(Optional.empty(), queue.settle(5), "an item never offered has no offer");
    assertEquals(1, queue.inFlight());
  }

  @Test
  void expireOffersBeforeReturnsOnlyStillOfferedItemsToReady() {
    readyAll(0, 1, 2, 3);
    take(3, T);
    take(1, T.plusSeconds(10));
    board.settle(1, StatusBoard.DONE); // settled while its offer was out

    int expired = queue.expireOffersBefore(T.plusSeconds(5));

    assertEquals(2, expired);
    assertEquals(1, queue.inFlight(), "the offer made at T+10s is still out");
    assertEquals(StatusBoard.DONE, board.get(1));
    assertEquals(StatusBoard.OFFERED, board.get(3));
    assertEquals(List.of(0, 2), seqs(take(10, T.plusSeconds(6))));
    assertEquals(Optional.empty(), queue.settle(1), "the expired offer of a settled item is gone");
  }

  @Test
  void anOfferMadeExactlyAtTheCutoffDoesNotExpire() {
    readyAll(0);
    take(1, T);

    assertEquals(0, queue.expireOffersBefore(T));
    assertEquals(1, queue.inFlight());
  }

  @Test
  void inFlightCountsOffersUntilTheySettleOrExpire() {
    assertEquals(0, queue.inFlight());
    readyAll(0, 1, 2);
    take(3, T);
    assertEquals(3, queue.inFlight());

    queue.settle(0);
    assertEquals(2, queue.inFlight());

    queue.expireOffersBefore(T.plusSeconds(1));
    assertEquals(0, queue.inFlight());
  }

  @Test
  void overdueSinceNamesWhenTheLongestWaitingParkedItemBecameDue() {
    assertEquals(Optional.empty(), queue.overdueSince(T));
    queue.park(ref(0), T.plusSeconds(20));
    queue.park(ref(1), T.plusSeconds(10));

    assertEquals(Optional.empty(), queue.overdueSince(T.plusSeconds(5)), "nothing is due yet");
    assertEquals(Optional.of(T.plusSeconds(10)), queue.overdueSince(T.plusSeconds(25)));

    queue.releaseDue(T.plusSeconds(25));

    assertEquals(Optional.empty(), queue.overdueSince(T.plusSeconds(25)));
  }

  @Test
  void clearWaitingDropsReadyAndParkedButKeepsOffersUntilTheySettle() {
    readyAll(0, 1, 2);
    take(1, T);
    queue.park(ref(3), T.plusSeconds(1));

    queue.clearWaiting();

    assertFalse(queue.hasReady());
    assertEquals(0, queue.readyCount());
    assertEquals(Optional.empty(), queue.overdueSince(T.plusSeconds(60)));
    queue.releaseDue(T.plusSeconds(60));
    assertEquals(List.of(), take(10, T.plusSeconds(60)));
    assertEquals(1, queue.inFlight());
    assertEquals(Optional.of(ref(0)), queue.settle(0));
  }

  @Test
  void anOffersAgeCountsFromWhenItWasTakenNotFromWhenItWasParked() {
    queue.park(ref(0), T.plus(Duration.ofMinutes(5)));
    queue.releaseDue(T.plus(Duration.ofMinutes(5)));
    take(1, T.plus(Duration.ofMinutes(5)));

    assertEquals(0, queue.expireOffersBefore(T.plus(Duration.ofMinutes(4))));
    assertEquals(1, queue.expireOffersBefore(T.plus(Duration.ofMinutes(6))));
  }

  @Test
  void expiredOffersGoAheadOfItemsNeverTried() {
    readyAll(0, 1);
    take(2, T); // offered to a pool that then died
    readyAll(2, 3, 4); // the rest of the backlog, paged in

    queue.expireOffersBefore(T.plusSeconds(10));

    assertEquals(List.of(0, 1, 2), seqs(take(3, T.plusSeconds(10))));
  }

  @Test
  void dueRetriesGoAheadOfItemsNeverTriedInTheOrderTheyBecameDue() {
    queue.park(ref(7), T.plusSeconds(2));
    queue.park(ref(5), T.plusSeconds(1));
    readyAll(0, 1);

    queue.releaseDue(T.plusSeconds(3));

    assertEquals(List.of(5, 7, 0, 1), seqs(take(10, T.plusSeconds(3))));
  }

  @Test
  void itemsOnShardsThatCannotAnswerArePutAsideAndQueueAgainWhenTheyCan() {
    readyAll(0, 1, 2, 3);
    Set<Integer> down = new HashSet<>(Set.of(1, 2));

    assertEquals(List.of(0, 3), seqs(queue.take(10, T, POOL, ref -> !down.contains(ref.seq()))));
    assertEquals(2, queue.blockedCount());
    assertEquals(StatusBoard.WAITING, board.get(1));
    readyAll(4);

    down.remove(2);
    assertEquals(1, queue.releaseReachable(ref -> !down.contains(ref.seq())));
    assertEquals(List.of(4, 2), seqs(take(10, T)), "behind the items that were ready");
    board.settle(1, StatusBoard.DONE); // its old attempt reported after all
    assertEquals(0, queue.releaseReachable(ref -> true));
    assertEquals(0, queue.blockedCount());
  }

  @Test
  void aGonePoolsItemPutAsideForItsShardStillGoesFirstWhenItCan() {
    Address gone = new Address("pekko", "fencekeeper", "10.0.0.3", 25520);
    readyAll(0, 1);
    queue.take(1, T, gone, ref -> true); // 0 offered to the gone member's pool
    queue.expireOffersTo(gone::equals);
    Set<Integer> down = new HashSet<>(Set.of(0, 2));
    readyAll(2, 3);

    assertEquals(List.of(1, 3), seqs(queue.take(10, T, POOL, ref -> !down.contains(ref.seq()))));
    readyAll(4, 5);
    down.clear();

    assertEquals(2, queue.releaseReachable(ref -> true));
    assertEquals(
        List.of(0, 4, 5, 2),
        seqs(take(10, T)),
        "its takeover is due: ahead of the others; an item never handed out queues behind");
  }

  @Test
  void offersToAPoolOnAGoneMemberGoFirstAtOnce() {
    Address gone = new Address("pekko", "fencekeeper", "10.0.0.3", 25520);
    readyAll(0, 1, 2);
    queue.take(2, T, gone, ref -> true);
    take(1, T);
    readyAll(3);

    assertEquals(2, queue.expireOffersTo(gone::equals));

    assertEquals(1, queue.inFlight(), "the offer to the live pool stays");
    assertEquals(List.of(0, 1, 3), seqs(take(10, T)));
  }

  @Test
  void onlyOffersWhoseItemCanBeReachedCountAsWorkInFlight() {
    readyAll(0, 1, 2);
    take(3, T);
    assertEquals(2, queue.inFlight(ref -> ref.seq() != 1));
    assertEquals(3, queue.inFlight());
  }

  @Test
  void anOfferThatWaitedOnAnUnreachableNodeCountsNoMoreUntilItSettles() {
    readyAll(0, 1, 2);
    take(3, T);
    assertEquals(2, queue.inFlight(ref -> ref.seq() != 1));

    // its node was removed: its shard looks reachable again, but the worker is still retrying
    assertEquals(2, queue.inFlight(ref -> true));

    queue.settle(1);
    assertEquals(2, queue.inFlight(ref -> true));
    readyAll(1);
    take(1, T);
    assertEquals(3, queue.inFlight(ref -> true), "offered again, it counts again");
    queue.expireOffersBefore(T.plusSeconds(1));
    assertEquals(0, queue.inFlight(ref -> true));
  }
}

package io.fencekeeper.dispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
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
        seq, ItemId.of("nightly", LocalDate.parse("2026-11-29"), "a" + seq, "c"), seq % 2);
  }

  static List<Integer> seqs(List<WorkQueue.Ref> refs) {
    return refs.stream().map(WorkQueue.Ref::seq).toList();
  }

  static final Address POOL = new Address("pekko", "fencekeeper", "10.0.0.1", 25520);

  /** Offers to a pool on {@link #POOL}. */
  List<WorkQueue.Ref> take(int max, Instant now) {
    return queue.take(max, now, POOL);
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
  void offersSilentSinceACutoffAreNamedOnceUntilTheirItemsAnswer() {
    readyAll(0, 1, 2, 3);
    take(3, T);
    take(1, T.plusSeconds(10));
    board.settle(1, StatusBoard.DONE);
    queue.settle(1); // its report came back

    assertEquals(List.of(0, 2), seqs(queue.silentSince(T.plusSeconds(5), T.plusSeconds(6))));
    assertEquals(
        List.of(),
        seqs(queue.silentSince(T.plusSeconds(5), T.plusSeconds(7))),
        "asked once: not named again at the next tick while the answer is on its way");
    assertEquals(3, queue.inFlight(), "asking takes nothing back");
  }

  @Test
  void anOfferMadeExactlyAtTheCutoffIsNotSilent() {
    readyAll(0);
    take(1, T);

    assertEquals(List.of(), queue.silentSince(T, T.plusSeconds(1)));
  }

  @Test
  void anOfferWhoseLeaseIsRenewedStaysInFlightAndIsAskedAboutAgainAfterTheRenewal() {
    readyAll(0);
    take(1, T);
    Instant askedAt = T.plusSeconds(36);
    assertEquals(List.of(0), seqs(queue.silentSince(T.plusSeconds(35), askedAt)));

    queue.heardOf(0, askedAt, T.plusSeconds(30)); // its worker renewed the lease at T+30s

    assertEquals(1, queue.inFlight());
    assertEquals(StatusBoard.OFFERED, board.get(0));
    assertEquals(List.of(), seqs(queue.silentSince(T.plusSeconds(30), T.plusSeconds(60))));
    assertEquals(List.of(0), seqs(queue.silentSince(T.plusSeconds(31), T.plusSeconds(66))));
  }

  @Test
  void anOfferNobodyRenewsGoesBackToReadyAheadOfTheRest() {
    readyAll(0, 1, 2);
    take(1, T);
    Instant askedAt = T.plusSeconds(36);
    queue.silentSince(T.plusSeconds(35), askedAt);

    assertTrue(queue.takeBack(0, askedAt));

    assertEquals(0, queue.inFlight());
    assertEquals(List.of(0, 1, 2), seqs(take(10, T.plusSeconds(37))));
  }

  @Test
  void anAnswerAboutAnOfferThatSettledMeanwhileLeavesTheItemsNextOfferAlone() {
    readyAll(0);
    take(1, T);
    Instant askedAt = T.plusSeconds(36);
    queue.silentSince(T.plusSeconds(35), askedAt);
    queue.settle(0); // the attempt ended (lease lost), and the item is offered again
    queue.ready(ref(0));
    take(1, T.plusSeconds(37));

    assertFalse(queue.takeBack(0, askedAt), "the answer was about the first offer");
    queue.heardOf(0, askedAt, T);

    assertEquals(1, queue.inFlight());
    assertEquals(List.of(), seqs(queue.silentSince(T.plusSeconds(35), T.plusSeconds(38))));
  }

  @Test
  void inFlightCountsOffersUntilTheySettleOrAreTakenBack() {
    assertEquals(0, queue.inFlight());
    readyAll(0, 1, 2);
    take(3, T);
    assertEquals(3, queue.inFlight());

    queue.settle(0);
    assertEquals(2, queue.inFlight());

    queue.takeBack(1, T);
    assertEquals(1, queue.inFlight());
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

    Instant later = T.plus(Duration.ofMinutes(7));
    assertEquals(List.of(), queue.silentSince(T.plus(Duration.ofMinutes(4)), later));
    assertEquals(List.of(0), seqs(queue.silentSince(T.plus(Duration.ofMinutes(6)), later)));
  }

  @Test
  void offersTakenBackGoAheadOfItemsNeverTried() {
    readyAll(0, 1);
    take(2, T); // offered to a pool that then died
    readyAll(2, 3, 4); // the rest of the backlog, paged in

    queue.takeBack(1, T);
    queue.takeBack(0, T);

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
  void itemsOfAShardThatLeftThisNodeLeaveTheQueueButTheirOffersStay() {
    readyAll(0, 1, 2, 3, 4, 5); // even seqs in shard 0, odd ones in shard 1
    take(2, T); // 0 and 1 offered
    queue.park(ref(3), T.plusSeconds(5));

    int dropped = queue.dropShards(shard -> shard == 0);

    assertEquals(3, dropped, "ready 5 and parked 3 of shard 1 go; the offer of 1 stays");
    assertEquals(StatusBoard.READY, board.get(3), "paged anew if its shard comes back");
    assertEquals(2, queue.inFlight());
    queue.releaseDue(T.plusSeconds(10));
    assertEquals(List.of(2, 4), seqs(take(10, T)));
  }

  @Test
  void offersToAPoolOnAGoneMemberGoFirstAtOnce() {
    Address gone = new Address("pekko", "fencekeeper", "10.0.0.3", 25520);
    readyAll(0, 1, 2);
    queue.take(2, T, gone);
    take(1, T);
    readyAll(3);

    assertEquals(2, queue.expireOffersTo(gone::equals));

    assertEquals(1, queue.inFlight(), "the offer to the live pool stays");
    assertEquals(List.of(0, 1, 3), seqs(take(10, T)));
  }
}

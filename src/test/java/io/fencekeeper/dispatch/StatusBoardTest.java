package io.fencekeeper.dispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The dispatcher's view of where each item stands: DONE never changes, FAILED only becomes DONE,
 * the counts follow every change, and each terminal change reaches {@code run_item} once.
 */
class StatusBoardTest {

  @Test
  void doneIsFinal() {
    StatusBoard board = new StatusBoard(1);
    assertTrue(board.settle(0, StatusBoard.DONE));

    assertFalse(board.settle(0, StatusBoard.FAILED));
    assertFalse(board.settle(0, StatusBoard.CLOSED));
    assertFalse(board.settle(0, StatusBoard.DONE));

    assertEquals(StatusBoard.DONE, board.get(0));
    assertEquals(1, board.done());
    assertEquals(0, board.failed());
    assertEquals(0, board.closed());
  }

  @Test
  void failedBecomesDoneWhenTheItemLaterReportsDoneAndTheCountsMove() {
    StatusBoard board = new StatusBoard(2);
    board.settle(0, StatusBoard.FAILED);
    assertEquals(1, board.failed());

    assertTrue(board.settle(0, StatusBoard.DONE));

    assertEquals(StatusBoard.DONE, board.get(0));
    assertEquals(1, board.done());
    assertEquals(0, board.failed());
  }

  @Test
  void failedNeverBecomesClosedOrFailedAgain() {
    StatusBoard board = new StatusBoard(1);
    board.settle(0, StatusBoard.FAILED);

    assertFalse(board.settle(0, StatusBoard.CLOSED));
    assertFalse(board.settle(0, StatusBoard.FAILED));

    assertEquals(StatusBoard.FAILED, board.get(0));
    assertEquals(1, board.failed());
    assertEquals(0, board.closed());
  }

  @Test
  void aClosedItemIsNotReopenedBySettle() {
    StatusBoard board = new StatusBoard(1);
    board.settle(0, StatusBoard.CLOSED);

    assertThrows(IllegalArgumentException.class, () -> board.settle(0, StatusBoard.READY));

    assertEquals(StatusBoard.CLOSED, board.get(0), "a rejected settle leaves the item closed");
    assertFalse(board.isOpen(0));
    assertEquals(1, board.closed(), "a rejected settle leaves the counts alone");
    assertEquals(
        List.of(new ScopeRows.StatusWrite(0, ScopeRows.CLOSED)),
        board.drainWrites(),
        "a rejected settle writes nothing");
  }

  @Test
  void anOpenItemCannotBeSettledToAnOpenStatus() {
    StatusBoard board = new StatusBoard(1);
    board.mark(0, StatusBoard.OFFERED);

    assertThrows(IllegalArgumentException.class, () -> board.settle(0, StatusBoard.WAITING));

    assertEquals(StatusBoard.OFFERED, board.get(0));
    assertTrue(board.drainWrites().isEmpty());
  }

  @Test
  void closedItemsThatTurnOutDoneOrFailedMoveBetweenTheCounts() {
    StatusBoard board = new StatusBoard(3);
    board.settle(0, StatusBoard.CLOSED);
    board.settle(1, StatusBoard.CLOSED);
    board.settle(2, StatusBoard.CLOSED);
    assertEquals(3, board.closed());

    board.settle(0, StatusBoard.DONE);
    board.settle(1, StatusBoard.FAILED);

    assertEquals(1, board.done());
    assertEquals(1, board.failed());
    assertEquals(1, board.closed());
  }

  @Test
  void countsStayRightAcrossAMixOfTransitions() {
    StatusBoard board = new StatusBoard(6);
    board.mark(0, StatusBoard.OFFERED);
    board.mark(1, StatusBoard.WAITING);
    board.settle(0, StatusBoard.DONE);
    board.settle(1, StatusBoard.FAILED);
    board.settle(2, StatusBoard.CLOSED);
    board.settle(3, StatusBoard.FAILED);
    board.settle(3, StatusBoard.DONE); // FAILED -> DONE
    board.settle(2, StatusBoard.FAILED); // CLOSED -> FAILED
    board.settle(0, StatusBoard.CLOSED); // DONE stays DONE
    board.settle(1, StatusBoard.CLOSED); // FAILED stays FAILED

    assertEquals(2, board.done());
    assertEquals(2, board.failed());
    assertEquals(0, board.closed());
    long open = 0;
    for (int seq = 0; seq < board.size(); seq++) {
      if (board.isOpen(seq)) {
        open++;
      }
    }
    assertEquals(2, open, "items 4 and 5 were never settled");
    assertEquals(board.size(), board.done() + board.failed() + board.closed() + open);
  }

  @Test
  void aQuarantinedItemIsCountedOpenAndLeavesTheCountWhenRetriedOrSettled() {
    StatusBoard board = new StatusBoard(3);
    board.mark(0, StatusBoard.QUARANTINED);
    board.mark(1, StatusBoard.QUARANTINED);
    board.mark(1, StatusBoard.QUARANTINED); // the same quarantine seen twice
    board.settle(2, StatusBoard.DONE);
    assertEquals(2, board.quarantined());
    assertTrue(board.isOpen(0), "quarantined is not settled");
    assertFalse(board.allSettled(), "the run does not end without its quarantined items");

    board.mark(0, StatusBoard.READY); // an operator retried it
    board.settle(1, StatusBoard.DONE);

    assertEquals(0, board.quarantined());
    assertEquals(2, board.done());
    assertTrue(board.drainWrites().stream().noneMatch(w -> w.seq() == 0), "nothing to cache");
  }

  @Test
  void allSettledOnlyWhenEveryItemIsDoneOrFailed() {
    StatusBoard board = new StatusBoard(3);
    assertFalse(board.allSettled());
    board.settle(0, StatusBoard.DONE);
    board.settle(1, StatusBoard.FAILED);
    board.settle(2, StatusBoard.CLOSED);
    assertFalse(board.allSettled(), "a closed item is not settled: a resume may still do it");

    board.settle(2, StatusBoard.DONE);

    assertTrue(board.allSettled());
  }

  @Test
  void anEmptyRunIsSettled() {
    assertTrue(new StatusBoard(0).allSettled());
  }

  @Test
  void drainWritesReturnsEachTerminalChangeOnceInOrderAndThenNothing() {
    StatusBoard board = new StatusBoard(4);
    board.settle(2, StatusBoard.FAILED);
    board.settle(0, StatusBoard.DONE);
    board.settle(0, StatusBoard.FAILED); // no change, no write
    board.settle(2, StatusBoard.DONE);
    board.mark(3, StatusBoard.OFFERED); // open moves are not written

    assertEquals(
        List.of(
            new ScopeRows.StatusWrite(2, ScopeRows.FAILED),
            new ScopeRows.StatusWrite(0, ScopeRows.DONE),
            new ScopeRows.StatusWrite(2, ScopeRows.DONE)),
        board.drainWrites());
    assertEquals(List.of(), board.drainWrites());

    board.settle(1, StatusBoard.CLOSED);

    assertEquals(List.of(new ScopeRows.StatusWrite(1, ScopeRows.CLOSED)), board.drainWrites());
  }

  @Test
  void aStatusReadFromTheCacheIsNotWrittenBackAndAFailedWriteIsTriedAgainFirst() {
    StatusBoard board = new StatusBoard(3);
    assertTrue(board.settleCached(0, StatusBoard.DONE));
    assertEquals(1, board.done());
    assertEquals(List.of(), board.drainWrites(), "it came from run_item");

    board.settle(1, StatusBoard.FAILED);
    List<ScopeRows.StatusWrite> failedWrite = board.drainWrites();
    board.settle(2, StatusBoard.CLOSED);
    board.unwritten(failedWrite);

    assertEquals(
        List.of(
            new ScopeRows.StatusWrite(1, ScopeRows.FAILED),
            new ScopeRows.StatusWrite(2, ScopeRows.CLOSED)),
        board.drainWrites());
  }
}

package io.fencekeeper.dispatch;

import java.util.ArrayList;
import java.util.List;

/**
 * Where each item of a running run stands, as the dispatcher knows it: one byte per item, so a run
 * of a million items costs a megabyte. Terminal statuses are also written back to {@code run_item}
 * in batches (the cache a restarted dispatcher starts from). The WorkItem entities stay the
 * authority: this is a cache that the next claim corrects.
 */
final class StatusBoard {

  static final byte READY = 0;
  static final byte OFFERED = 1;
  static final byte DONE = 2;
  static final byte FAILED = 3;
  static final byte CLOSED = 4;

  /** Parked until a retry is due, a lease runs out, or a reopen answers. */
  static final byte WAITING = 5;

  /**
   * Out of work until an operator retries it: open, but never handed out ({@link
   * QuarantinedItems}).
   */
  static final byte QUARANTINED = 6;

  private final byte[] status;
  private long done;
  private long failed;
  private long closed;
  private long quarantined;
  private final List<ScopeRows.StatusWrite> unwritten = new ArrayList<>();

  StatusBoard(int size) {
    this.status = new byte[size];
  }

  int size() {
    return status.length;
  }

  byte get(int seq) {
    return status[seq];
  }

  /** Moves an open item between READY, OFFERED, WAITING and QUARANTINED. */
  void mark(int seq, byte open) {
    byte previous = status[seq];
    if (previous == QUARANTINED && open != QUARANTINED) {
      quarantined--;
    } else if (open == QUARANTINED && previous != QUARANTINED) {
      quarantined++;
    }
    status[seq] = open;
  }

  /** Neither DONE, FAILED nor CLOSED. */
  boolean isOpen(int seq) {
    byte s = status[seq];
    return s != DONE && s != FAILED && s != CLOSED;
  }

  /**
   * Records that an item ended DONE, FAILED or CLOSED. DONE never changes; FAILED only becomes DONE
   * (a later report of the item's truth). Returns whether anything changed. The status is written
   * to {@code run_item} with the next batch.
   */
  boolean settle(int seq, byte terminal) {
    return settle(seq, terminal, true);
  }

  /**
   * As {@link #settle(int, byte)}, for a status read from {@code run_item}: nothing to write back.
   */
  boolean settleCached(int seq, byte terminal) {
    return settle(seq, terminal, false);
  }

  private boolean settle(int seq, byte terminal, boolean write) {
    if (terminal != DONE && terminal != FAILED && terminal != CLOSED) {
      throw new IllegalArgumentException("not a terminal status: " + terminal);
    }
    byte previous = status[seq];
    if (previous == terminal || previous == DONE || (previous == FAILED && terminal != DONE)) {
      return false;
    }
    status[seq] = terminal;
    if (previous == CLOSED) {
      closed--;
    } else if (previous == FAILED) {
      failed--;
    } else if (previous == QUARANTINED) {
      quarantined--;
    }
    switch (terminal) {
      case DONE -> done++;
      case FAILED -> failed++;
      default -> closed++;
    }
    if (write) {
      unwritten.add(new ScopeRows.StatusWrite(seq, terminal));
    }
    return true;
  }

  long done() {
    return done;
  }

  long failed() {
    return failed;
  }

  long closed() {
    return closed;
  }

  /** Open items out of work until an operator retries them. */
  long quarantined() {
    return quarantined;
  }

  /** Every item is DONE or FAILED: nothing is left to try (a QUARANTINED item is not settled). */
  boolean allSettled() {
    return done + failed == status.length;
  }

  /** The terminal statuses not yet written to {@code run_item}, oldest first. */
  List<ScopeRows.StatusWrite> drainWrites() {
    if (unwritten.isEmpty()) {
      return List.of();
    }
    List<ScopeRows.StatusWrite> batch = List.copyOf(unwritten);
    unwritten.clear();
    return batch;
  }

  /** A batch whose write failed goes back ahead of the newer ones, to be written again. */
  void unwritten(List<ScopeRows.StatusWrite> batch) {
    unwritten.addAll(0, batch);
  }
}

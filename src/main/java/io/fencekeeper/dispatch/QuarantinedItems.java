package io.fencekeeper.dispatch;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The items of a running run that are QUARANTINED (docs/design.md, "The dispatcher"): their last
 * holders vanished while they held them, so they stay out of dispatch, count as quarantined on the
 * {@link StatusBoard}, and are looked up every few seconds: an item an operator retried ({@code
 * POST /api/items/{id}/retry}) is handed out again. They are few, so they are kept in memory.
 */
final class QuarantinedItems {

  /** How often the dispatcher asks the quarantined items whether an operator retried them. */
  static final Duration LOOKUP_EVERY = Duration.ofSeconds(3);

  private final StatusBoard board;
  private final Map<Integer, WorkQueue.Ref> items = new HashMap<>();
  private Instant nextLookup = Instant.MIN;
  private int unanswered;

  QuarantinedItems(StatusBoard board) {
    this.board = board;
  }

  /**
   * Keeps the item out of dispatch; answers whether it was not known to be quarantined already (a
   * new quarantine for the run's counter and the governor).
   */
  boolean add(WorkQueue.Ref ref) {
    board.mark(ref.seq(), StatusBoard.QUARANTINED);
    return items.put(ref.seq(), ref) == null;
  }

  /** The item is no longer quarantined (retried, or settled otherwise); the caller places it. */
  Optional<WorkQueue.Ref> remove(int seq) {
    return Optional.ofNullable(items.remove(seq));
  }

  /** The items to look up now: every few seconds, and never while a look-up is unanswered. */
  List<WorkQueue.Ref> dueForLookup(Instant now) {
    if (items.isEmpty() || unanswered > 0 || now.isBefore(nextLookup)) {
      return List.of();
    }
    nextLookup = now.plus(LOOKUP_EVERY);
    unanswered = items.size();
    return List.copyOf(items.values());
  }

  /** One look-up answered (or failed). */
  void answered() {
    unanswered = Math.max(0, unanswered - 1);
  }

  int size() {
    return items.size();
  }
}

package io.fencekeeper.item;

import io.fencekeeper.item.WorkItem.AttemptFailed;
import io.fencekeeper.item.WorkItem.AttemptsExhausted;
import io.fencekeeper.item.WorkItem.EffectRecorded;
import io.fencekeeper.item.WorkItem.Event;
import io.fencekeeper.item.WorkItem.ItemClosed;
import io.fencekeeper.item.WorkItem.ItemCompleted;
import io.fencekeeper.item.WorkItem.ItemQuarantined;
import io.fencekeeper.item.WorkItem.LeaseGranted;
import io.fencekeeper.item.WorkItem.LeaseReleased;
import io.fencekeeper.item.WorkItem.StaleCommandRejected;
import java.util.Set;

/**
 * Which item events a run's counters are made of, tagged in the journal (docs/design.md,
 * "Observability"): stale rejections, takeovers, attempts that ended without a clean completion,
 * and completions that reconciled or met throttling. A clean completion is not tagged, so the happy
 * path writes no tag row. The run of an event is in its persistence id.
 */
public final class ItemSignals {

  /** The tag, in the journal's tag rows: renaming it orphans the rows tagged before. */
  public static final String TAG = "item-signal";

  static final Set<String> TAGS = Set.of(TAG);

  private ItemSignals() {}

  static boolean isSignal(Event event) {
    if (event instanceof LeaseGranted granted) {
      return granted.previousOwner() != null;
    }
    if (event instanceof ItemCompleted completed) {
      return completed.reconciled() || completed.throttles() > 0;
    }
    if (event instanceof EffectRecorded recorded) {
      return recorded.reconciled();
    }
    if (event instanceof ItemClosed closed) {
      return closed.abandonedOwner() != null;
    }
    return event instanceof StaleCommandRejected
        || event instanceof AttemptFailed
        || event instanceof LeaseReleased
        || event instanceof ItemQuarantined
        || event instanceof AttemptsExhausted;
  }
}

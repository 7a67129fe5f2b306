package io.fencekeeper.run;

/**
 * The one rule for how a run ends, whether every item settled or the run was stopped (deadline,
 * cancel, too many failures): only DONE items count, and the dispatcher having run proves nothing.
 */
final class RunOutcome {

  private RunOutcome() {}

  /**
   * CANCELLED when an operator cancelled; SUCCEEDED only when every item is DONE; FAILED when none
   * is, or more than {@code maxFailedItems} failed; PARTIAL otherwise.
   */
  static RunState finalState(
      long total, long done, long failed, int maxFailedItems, boolean cancelled) {
    if (cancelled) {
      return RunState.CANCELLED;
    }
    if (done == total) {
      return RunState.SUCCEEDED;
    }
    if (done == 0 || failed > maxFailedItems) {
      return RunState.FAILED;
    }
    return RunState.PARTIAL;
  }
}

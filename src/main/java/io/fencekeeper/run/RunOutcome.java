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

  /** How a run ends: its state, why, and its final figures. */
  record Ending(RunState state, String reason, RunProgress progress) {}

  /**
   * The end of a run from its items counted in {@code run_item} (each item once, wherever its shard
   * was), or empty when it has not ended: not stopping, and not every item DONE or FAILED yet (the
   * last statuses are not written). A stopping run ends with what its close sweep left. {@code
   * now}: the run's live figures, for its rate and governor.
   */
  static java.util.Optional<Ending> ofCount(
      RunRecord run,
      java.util.Map<Short, Long> counts,
      LiveRun.Stopping stopping,
      RunProgress now) {
    long total = run.itemCount();
    long done = counts.getOrDefault(io.fencekeeper.dispatch.ScopeRows.DONE, 0L);
    long failed = counts.getOrDefault(io.fencekeeper.dispatch.ScopeRows.FAILED, 0L);
    long closed = counts.getOrDefault(io.fencekeeper.dispatch.ScopeRows.CLOSED, 0L);
    long quarantined = counts.getOrDefault(io.fencekeeper.dispatch.ScopeRows.QUARANTINED, 0L);
    if (stopping == null && done + failed < total) {
      return java.util.Optional.empty();
    }
    RunState end =
        finalState(
            total,
            done,
            failed,
            run.request().maxFailedItems(),
            stopping != null && stopping.cancel());
    String reason =
        stopping != null
            ? stopping.reason()
            : failed == 0 ? "every item is done" : failed + " items failed";
    long open = Math.max(0, total - done - failed - closed - quarantined);
    RunProgress last =
        new RunProgress(
            new Counts(total, open, 0, done, failed, closed, quarantined),
            0,
            now.itemsPerSecond(),
            null,
            now.governor(),
            null);
    return java.util.Optional.of(new Ending(end, reason, last));
  }
}

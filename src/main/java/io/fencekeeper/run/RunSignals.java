package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.WorkItem;

/**
 * A run's counters, each derived from its items' journaled events (docs/design.md,
 * "Observability"), so they survive node deaths, coordinator moves and restarts:
 *
 * @param staleRejections commands refused for a stale token, another worker or a lapsed lease
 *     ({@code StaleCommandRejected})
 * @param takeovers claims of an item whose previous holder's lease expired before it completed,
 *     failed or released the item ({@code LeaseGranted} with a previous owner)
 * @param reconciliations completions (or effect records) that resolved an AMBIGUOUS effect
 * @param throttledAnswers throttled provider answers (429 / Retry-After) met by attempts that ended
 *     with an outcome
 * @param attemptsWithoutCompletion attempts that ended without completing the item: failed,
 *     released, taken over, or closed while leased. Every claim ends in exactly one of these or in
 *     a completion, so a run's ended attempts are its DONE items plus this
 * @param quarantines items quarantined because their holders vanished attempt after attempt ({@code
 *     ItemQuarantined})
 */
public record RunSignals(
    long staleRejections,
    long takeovers,
    long reconciliations,
    long throttledAnswers,
    long attemptsWithoutCompletion,
    long quarantines)
    implements CborSerializable {

  public static final RunSignals NONE = new RunSignals(0, 0, 0, 0, 0, 0);

  /** What one journaled item event adds to its run's counters. */
  public static RunSignals of(WorkItem.Event event) {
    if (event instanceof WorkItem.StaleCommandRejected) {
      return new RunSignals(1, 0, 0, 0, 0, 0);
    }
    if (event instanceof WorkItem.LeaseGranted granted && granted.previousOwner() != null) {
      return new RunSignals(0, 1, 0, 0, 1, 0);
    }
    if (event instanceof WorkItem.ItemCompleted completed) {
      return new RunSignals(0, 0, completed.reconciled() ? 1 : 0, completed.throttles(), 0, 0);
    }
    if (event instanceof WorkItem.EffectRecorded recorded) {
      return new RunSignals(0, 0, recorded.reconciled() ? 1 : 0, 0, 0, 0);
    }
    if (event instanceof WorkItem.AttemptFailed failed) {
      return new RunSignals(0, 0, 0, failed.throttles(), 1, 0);
    }
    if (event instanceof WorkItem.LeaseReleased) {
      return new RunSignals(0, 0, 0, 0, 1, 0);
    }
    if (event instanceof WorkItem.ItemClosed closed && closed.abandonedOwner() != null) {
      return new RunSignals(0, 0, 0, 0, 1, 0);
    }
    if (event instanceof WorkItem.ItemQuarantined quarantined) {
      return new RunSignals(0, 0, 0, 0, endsALease(quarantined.previousOwner()), 1);
    }
    if (event instanceof WorkItem.AttemptsExhausted exhausted) {
      return new RunSignals(0, 0, 0, 0, endsALease(exhausted.previousOwner()), 0);
    }
    return NONE;
  }

  private static long endsALease(String previousOwner) {
    return previousOwner == null ? 0 : 1;
  }

  public RunSignals plus(RunSignals other) {
    return new RunSignals(
        staleRejections + other.staleRejections,
        takeovers + other.takeovers,
        reconciliations + other.reconciliations,
        throttledAnswers + other.throttledAnswers,
        attemptsWithoutCompletion + other.attemptsWithoutCompletion,
        quarantines + other.quarantines);
  }

  public boolean isEmpty() {
    return equals(NONE);
  }
}

package io.fencekeeper.run;

import io.fencekeeper.run.RunCoordinator.ControlRefused;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the run coordinator decides, with no actor in sight (docs/design.md, "Runs and the
 * coordinator"): whether a create is the same run or a conflict, whether a run may be resumed or
 * cancelled, when a deadline has passed, whether retention may prune a run, how the journal's
 * signals add up, and which filed runs the coordinator may forget. {@link RunCoordinator} journals
 * and answers what these say.
 */
final class RunRules {

  private RunRules() {}

  /**
   * Why creating {@code request} conflicts with the run that exists, naming every parameter that
   * differs; empty: the same run, answered as it is. A null {@code scopeDigest}: the caller did not
   * read the scope again (the same file or query named), so its contents are not compared.
   */
  static Optional<String> createConflict(
      RunRecord existing, RunRequest request, String scopeDigest) {
    List<String> differences = existing.request().differencesFrom(request);
    if (scopeDigest != null
        && !existing.scopeDigest().equals(scopeDigest)
        && !differences.contains("scope")) {
      differences.add("scope contents (the accounts are not the same)");
    }
    return differences.isEmpty()
        ? Optional.empty()
        : Optional.of(
            "run "
                + request.runId()
                + " already exists with different parameters: "
                + String.join(", ", differences));
  }

  /** Why {@code run} cannot be resumed until {@code newDeadline} at {@code now}, if it cannot. */
  static Optional<ControlRefused> resumeRefusal(RunRecord run, Instant newDeadline, Instant now) {
    if (newDeadline == null || !newDeadline.isAfter(now)) {
      return refused("invalid_deadline", "the new deadline must be in the future");
    }
    if (run.state() == RunState.RUNNING) {
      return refused("run_running", "run " + run.runId() + " is still RUNNING");
    }
    if (run.state() == RunState.SUCCEEDED) {
      return refused("run_succeeded", "run " + run.runId() + " SUCCEEDED: nothing to resume");
    }
    return Optional.empty();
  }

  /**
   * A filed run retention prunes or pruned cannot be resumed: its items are (being) deleted, and
   * reopened they would start again from nothing.
   */
  static Optional<ControlRefused> filedResumeRefusal(
      String runId, boolean pruning, boolean archived) {
    return pruning || archived
        ? refused(
            "run_archived",
            "run "
                + runId
                + " was archived by retention: its items are no longer in the journal, so it"
                + " cannot be resumed")
        : Optional.empty();
  }

  /** Only a RUNNING run can be cancelled. */
  static Optional<ControlRefused> cancelRefusal(String runId, RunState state) {
    return state == RunState.RUNNING
        ? Optional.empty()
        : refused("run_ended", "run " + runId + " already ended " + state);
  }

  static ControlRefused unknownRun(String runId) {
    return new ControlRefused("unknown_run", "no run " + runId);
  }

  /** A RUNNING run whose deadline is {@code now} or earlier, by the coordinator's clock, stops. */
  static boolean pastDeadline(RunRecord run, Instant now) {
    return run.state() == RunState.RUNNING && !now.isBefore(run.deadline());
  }

  /**
   * Why retention may not prune a filed run, if it may not: the coordinator holds it ({@code held}:
   * resumed since) or is still writing it to {@code run_record} ({@code filing}).
   */
  static Optional<String> pruneRefusal(boolean held, boolean filing) {
    return held || filing
        ? Optional.of(
            "the coordinator holds the run: it was resumed, or it ended a moment ago and is not"
                + " filed yet")
        : Optional.empty();
  }

  /** What a batch of the journal's signals adds: per run, and the offset counted up to. */
  record Counted(long offset, Map<String, RunSignals> deltas) {}

  /**
   * Adds up the signals after {@code offset} (each event once: one at or before it was counted
   * already); a signal of no run only moves the offset.
   */
  static Counted count(List<SignalProjection.Signal> signals, long offset) {
    Map<String, RunSignals> deltas = new TreeMap<>();
    long upTo = offset;
    for (SignalProjection.Signal signal : signals) {
      if (signal.offset() > offset && signal.runId() != null) {
        deltas.merge(signal.runId(), signal.delta(), RunSignals::plus);
      }
      upTo = Math.max(upTo, signal.offset());
    }
    return new Counted(upTo, deltas);
  }

  /**
   * Of the runs just written to {@code run_record} with these counters, the ones the coordinator
   * may forget: still ended (not resumed meanwhile) and with counters that did not grow since (else
   * they are written again).
   */
  static List<String> forgettable(Map<String, RunSignals> written, RunCoordinator.State state) {
    return written.entrySet().stream()
        .filter(
            e -> {
              RunRecord run = state.runs().get(e.getKey());
              return run != null
                  && run.state().ended()
                  && state.signalsOf(e.getKey()).equals(e.getValue());
            })
        .map(Map.Entry::getKey)
        .toList();
  }

  private static Optional<ControlRefused> refused(String error, String message) {
    return Optional.of(new ControlRefused(error, message));
  }
}

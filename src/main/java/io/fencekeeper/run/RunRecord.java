package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.ItemId;
import java.time.Instant;

/**
 * One run as the coordinator remembers it (journaled with the coordinator's state): what was asked,
 * where its scope is staged, and how it stands. The dispatcher of a running run is started from it.
 *
 * @param scopeId the run's rows in {@code run_item}
 * @param deadline the deadline in force (a resume replaces the request's)
 * @param finalProgress the figures when the run ended; null while it runs
 * @param resumes how often the run was resumed; a resumed dispatcher reopens closed items
 */
public record RunRecord(
    RunRequest request,
    String scopeId,
    long itemCount,
    String scopeDigest,
    RunState state,
    Instant createdAt,
    Instant deadline,
    Instant endedAt,
    String endReason,
    RunProgress finalProgress,
    boolean cancelRequested,
    int resumes)
    implements CborSerializable {

  static RunRecord created(
      RunRequest request, String scopeId, long itemCount, String scopeDigest, Instant at) {
    return new RunRecord(
        request,
        scopeId,
        itemCount,
        scopeDigest,
        RunState.RUNNING,
        at,
        request.deadline(),
        null,
        null,
        null,
        false,
        0);
  }

  public String runId() {
    return request.runId();
  }

  /** The item at one row of this run's scope. */
  public ItemId itemId(String accountId, String cursor) {
    return ItemId.of(request.job(), request.businessDate(), accountId, cursor);
  }

  RunRecord ended(RunState endState, RunProgress progress, String reason, Instant at) {
    return new RunRecord(
        request,
        scopeId,
        itemCount,
        scopeDigest,
        endState,
        createdAt,
        deadline,
        at,
        reason,
        progress,
        false,
        resumes);
  }

  RunRecord resumed(Instant newDeadline) {
    return new RunRecord(
        request,
        scopeId,
        itemCount,
        scopeDigest,
        RunState.RUNNING,
        createdAt,
        newDeadline,
        null,
        null,
        null,
        false,
        resumes + 1);
  }

  RunRecord withCancelRequested() {
    return new RunRecord(
        request,
        scopeId,
        itemCount,
        scopeDigest,
        state,
        createdAt,
        deadline,
        endedAt,
        endReason,
        finalProgress,
        true,
        resumes);
  }
}

package io.fencekeeper.archive;

import io.fencekeeper.CborSerializable;
import java.time.Instant;

/**
 * What a retention pass does (or, in a dry run, would do) with one run, and why: ARCHIVE an ended
 * run older than the cutoff, FINISH one a pass left half-way (its archive is written or being
 * written, so it is completed whatever the cutoff), SKIP one the coordinator holds again (resumed).
 */
public record PruneDecision(
    String runId, String state, Instant endedAt, Action action, String reason)
    implements CborSerializable {

  public enum Action {
    ARCHIVE,
    FINISH,
    SKIP
  }
}

package io.fencekeeper.run;

/**
 * Another stager took the staging over (this one's node was thought gone): this one stops without
 * touching the rows, which are the other's now.
 */
final class StagingLost extends RuntimeException {

  StagingLost(String runId) {
    super("run " + runId + ": another node took the staging over");
  }
}

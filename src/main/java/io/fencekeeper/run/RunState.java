package io.fencekeeper.run;

/** Where a run stands. Only SUCCEEDED means every item is DONE. */
public enum RunState {
  /**
   * Its scope is still being staged; the coordinator does not know the run yet (see {@code
   * RunStaging}). Never journaled.
   */
  STAGING,
  RUNNING,
  SUCCEEDED,
  PARTIAL,
  FAILED,
  CANCELLED;

  public boolean ended() {
    return this != RUNNING && this != STAGING;
  }

  /** The `run` command's exit code: 0 SUCCEEDED, 2 PARTIAL, 3 FAILED (and CANCELLED). */
  public int exitCode() {
    return switch (this) {
      case SUCCEEDED -> 0;
      case PARTIAL -> 2;
      case STAGING, RUNNING -> 1;
      case FAILED, CANCELLED -> 3;
    };
  }
}

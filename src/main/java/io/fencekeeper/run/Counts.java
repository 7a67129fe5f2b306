package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;

/**
 * Items of a run by status; {@code pending} includes items waiting for a retry, {@code quarantined}
 * are out of work until an operator retries them (neither pending nor done).
 */
public record Counts(
    long total, long pending, long leased, long done, long failed, long closed, long quarantined)
    implements CborSerializable {

  /** Counts of a run without quarantined items (staging, and views written before quarantine). */
  public Counts(long total, long pending, long leased, long done, long failed, long closed) {
    this(total, pending, leased, done, failed, closed, 0);
  }

  public static Counts allPending(long total) {
    return new Counts(total, total, 0, 0, 0, 0);
  }
}

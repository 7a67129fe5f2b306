package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;

/** Items of a run by status; {@code pending} includes items waiting for a retry. */
public record Counts(long total, long pending, long leased, long done, long failed, long closed)
    implements CborSerializable {

  public static Counts allPending(long total) {
    return new Counts(total, total, 0, 0, 0, 0);
  }
}

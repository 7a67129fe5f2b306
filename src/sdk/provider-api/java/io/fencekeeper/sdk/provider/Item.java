package io.fencekeeper.sdk.provider;

import java.time.LocalDate;
import java.util.Objects;

/**
 * One unit of cleanup: an account of a job's run for one business date, at a provider cursor. Its
 * {@link #value()} ({@code job/businessDate/accountId/cursor}) is the {@code itemId} of the
 * protocol, stable across retries, resumes and nodes.
 *
 * <p>Fencekeeper only hands a plugin items whose segments are 1-128 characters of letters, digits
 * or {@code ._:@+=-}.
 */
public record Item(String job, LocalDate businessDate, String accountId, String cursor) {

  public Item {
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(businessDate, "businessDate");
    Objects.requireNonNull(accountId, "accountId");
    Objects.requireNonNull(cursor, "cursor");
  }

  /** {@code job/businessDate/accountId/cursor}: the item's id. */
  public String value() {
    return job + "/" + businessDate + "/" + accountId + "/" + cursor;
  }

  @Override
  public String toString() {
    return value();
  }
}

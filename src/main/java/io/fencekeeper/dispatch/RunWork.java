package io.fencekeeper.dispatch;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.ItemId;
import java.time.Instant;
import java.time.LocalDate;

/**
 * What a node needs to dispatch a run's items: where its scope is staged, how its items are named,
 * how many attempts each may have, which provider it calls, and when it must stop at the latest.
 *
 * @param resumes how often the run was resumed: a resumed run's dispatcher reopens what the
 *     deadline closed, and a new resume starts a new dispatcher
 * @param provider the provider's name; null: the default one
 * @param maxFailedItems the run's failure limit: a dispatcher that has seen more items FAILED stops
 *     handing out at once, before the coordinator's stop reaches it; null: not known (an assignment
 *     from a node of an earlier version)
 */
public record RunWork(
    String runId,
    String scopeId,
    String job,
    LocalDate businessDate,
    long itemCount,
    int maxAttempts,
    String provider,
    Instant deadline,
    int resumes,
    Integer maxFailedItems)
    implements CborSerializable {

  /** Without a failure limit known to the dispatcher (the coordinator's stop still applies). */
  public RunWork(
      String runId,
      String scopeId,
      String job,
      LocalDate businessDate,
      long itemCount,
      int maxAttempts,
      String provider,
      Instant deadline,
      int resumes) {
    this(
        runId,
        scopeId,
        job,
        businessDate,
        itemCount,
        maxAttempts,
        provider,
        deadline,
        resumes,
        null);
  }

  /** Whether {@code failed} items FAILED are more than the run allows. */
  public boolean tooManyFailed(long failed) {
    return maxFailedItems != null && failed > maxFailedItems;
  }

  /** The item at one row of this run's scope. */
  public ItemId itemId(String accountId, String cursor) {
    return ItemId.of(job, businessDate, accountId, cursor);
  }
}

package io.fencekeeper.run;

import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.ScopeSink;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToIntFunction;

/**
 * A scope being staged in {@code run_item} under one scope id: items are numbered in order, and the
 * table's unique index finds repeated accounts, so staging holds one batch at a time.
 */
final class StagedScope implements ScopeSink {

  private final RunItemStore store;
  private final String scopeId;
  private final ToIntFunction<AccountCursor> shardOf;
  private final AtomicLong staged = new AtomicLong();
  private int nextSeq;

  StagedScope(RunItemStore store, String scopeId, ToIntFunction<AccountCursor> shardOf) {
    this.store = store;
    this.scopeId = scopeId;
    this.shardOf = shardOf;
  }

  String scopeId() {
    return scopeId;
  }

  /** Rows in {@code run_item} so far; read by other threads for progress. */
  long staged() {
    return staged.get();
  }

  @Override
  public List<Long> stage(List<Positioned> batch) {
    List<Long> repeats = store.stageNew(scopeId, nextSeq, batch, shardOf);
    nextSeq += batch.size();
    staged.addAndGet(batch.size() - repeats.size());
    return repeats;
  }

  @Override
  public long firstPositionOf(AccountCursor account) {
    return store.sourcePosition(scopeId, account);
  }
}

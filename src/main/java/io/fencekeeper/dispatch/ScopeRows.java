package io.fencekeeper.dispatch;

import java.util.List;

/**
 * A run's scope as a node's dispatcher reads it: the {@code run_item} rows of one shard, paged, and
 * the terminal statuses it caches there (the cache a dispatcher that takes a shard over starts
 * from; the WorkItem entities stay the authority). Implemented by the run layer's store. Calls
 * block: callers run them on the blocking executor, never on an actor's thread.
 */
public interface ScopeRows {

  /** Not known to be terminal: ask the item. */
  short UNKNOWN = StatusBoard.READY;

  short DONE = StatusBoard.DONE;
  short FAILED = StatusBoard.FAILED;
  short CLOSED = StatusBoard.CLOSED;

  /** Written only by the close sweep of a run that stops, for its final count. */
  short QUARANTINED = StatusBoard.QUARANTINED;

  /** One staged item of a run's scope. */
  record Row(int seq, String accountId, String cursor, short status) {}

  /** A terminal status to cache for the item at {@code seq}. */
  record StatusWrite(int seq, short status) {}

  /** Up to {@code limit} items of {@code shard} with {@code seq >= fromSeq}, in order. */
  List<Row> pageShard(String scopeId, int shard, int fromSeq, int limit);

  /** Caches terminal statuses. */
  void markStatuses(String scopeId, List<StatusWrite> writes);
}

package io.fencekeeper.dispatch;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A run's {@code run_item} rows in memory, by shard, as a node's dispatcher reads and writes them:
 * it records which shards were paged and every status written, and a test may hold the writes (a
 * slow database) to see what the dispatcher does meanwhile. One scope; row {@code seq} is account
 * {@code acct-<seq>}, cursor {@code c-1}.
 */
final class ShardRows implements ScopeRows {

  private final Map<Integer, Integer> shardOfSeq = new ConcurrentHashMap<>();
  private final Map<Integer, Short> statuses = new ConcurrentHashMap<>();
  private final List<Integer> paged = new CopyOnWriteArrayList<>();
  private final List<StatusWrite> written = new CopyOnWriteArrayList<>();
  private final AtomicInteger writesBegun = new AtomicInteger();
  private volatile CompletableFuture<Void> writes = CompletableFuture.completedFuture(null);

  /** Rows {@code seqs} are in {@code shard}. */
  void add(int shard, int... seqs) {
    for (int seq : seqs) {
      shardOfSeq.put(seq, shard);
    }
  }

  /** Row {@code seq} carries a status cached by an earlier dispatcher. */
  void cache(int seq, short status) {
    statuses.put(seq, status);
  }

  /** Status writes wait until {@link #openWrites}. */
  void holdWrites() {
    writes = new CompletableFuture<>();
  }

  void openWrites() {
    writes.complete(null);
  }

  /** The shard of each page read, in order. */
  List<Integer> pagedShards() {
    return List.copyOf(paged);
  }

  /** Every status written, in order. */
  List<StatusWrite> written() {
    return List.copyOf(written);
  }

  int writesBegun() {
    return writesBegun.get();
  }

  int shardOf(int seq) {
    return shardOfSeq.get(seq);
  }

  /** The status of every row now (cached or written), by seq. */
  Map<Integer, Short> statuses() {
    return new HashMap<>(statuses);
  }

  @Override
  public List<Row> pageShard(String scopeId, int shard, int fromSeq, int limit) {
    paged.add(shard);
    return shardOfSeq.entrySet().stream()
        .filter(e -> e.getValue() == shard && e.getKey() >= fromSeq)
        .map(Map.Entry::getKey)
        .sorted()
        .limit(limit)
        .map(seq -> new Row(seq, "acct-" + seq, "c-1", statuses.getOrDefault(seq, UNKNOWN)))
        .toList();
  }

  @Override
  public void markStatuses(String scopeId, List<StatusWrite> batch) {
    writesBegun.incrementAndGet();
    writes.join();
    for (StatusWrite write : batch) {
      statuses.put(write.seq(), write.status());
      written.add(write);
    }
  }
}

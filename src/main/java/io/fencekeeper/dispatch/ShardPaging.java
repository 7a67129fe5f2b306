package io.fencekeeper.dispatch;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which of the shards this node hosts its dispatcher pages in next, and from which item: one shard
 * at a time, a page of {@code run_item} rows at a time. A shard that arrives once a member was lost
 * (removed from the cluster) is an arrival: paged first and to its end, from its first item, since
 * the leases the lost node held among its items are due for a takeover. Before any loss, a shard
 * that comes later is paged like the first ones, a page when the queue runs low: at a night's start
 * the shards are allocated one by one after the dispatcher starts, and paging each to its end at
 * once would hold the whole night in memory; a shard that moved from a node that is still a member
 * (a rebalance) has a live old host, whose workers finish what they hold. One that leaves is
 * forgotten, so that it is paged anew if it comes back.
 */
final class ShardPaging {

  // hosted shards not yet paged to their end, and the seq to page each from
  private final Map<Integer, Integer> next = new TreeMap<>();
  private final Set<Integer> paged = new TreeSet<>();
  // shards that arrived after the first hosted set, not paged to their end yet
  private final Set<Integer> arrived = new TreeSet<>();
  private boolean first = true;
  private boolean memberLost;

  /** The shards this node hosts now. */
  void hosted(Set<Integer> shards) {
    next.keySet().retainAll(shards);
    paged.retainAll(shards);
    arrived.retainAll(shards);
    for (int shard : shards) {
      if (!paged.contains(shard) && next.putIfAbsent(shard, 0) == null && !first && memberLost) {
        arrived.add(shard);
      }
    }
    first = false;
  }

  /** A member was removed: the shards that come from now on may hold its leases. */
  void memberLost() {
    memberLost = true;
  }

  /** The next shard to page, if any hosted shard has rows not paged in yet: arrivals first. */
  OptionalInt nextShard() {
    if (!arrived.isEmpty()) {
      return OptionalInt.of(arrived.iterator().next());
    }
    return next.isEmpty() ? OptionalInt.empty() : OptionalInt.of(next.keySet().iterator().next());
  }

  /** Whether {@code shard} arrived while the dispatcher ran and is not paged to its end yet. */
  boolean arrived(int shard) {
    return arrived.contains(shard);
  }

  /** Whether an arrived shard waits to be paged: paged in even when the queue is full. */
  boolean hasArrivals() {
    return !arrived.isEmpty();
  }

  /** The seq to page {@code shard} from. */
  int from(int shard) {
    return next.getOrDefault(shard, 0);
  }

  /**
   * A page of {@code shard} came back: the next one starts after it; a short page is its end. A
   * shard that left meanwhile stays forgotten.
   */
  void loaded(int shard, List<ScopeRows.Row> rows, int limit) {
    if (!next.containsKey(shard)) {
      return;
    }
    if (rows.size() < limit) {
      next.remove(shard);
      arrived.remove(shard);
      paged.add(shard);
    } else {
      next.put(shard, rows.get(rows.size() - 1).seq() + 1);
    }
  }

  /** Every hosted shard has been paged to its end. */
  boolean allPaged() {
    return next.isEmpty();
  }
}

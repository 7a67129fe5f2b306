package io.fencekeeper.dispatch;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which of the shards this node hosts its dispatcher pages in next, and from which item: one shard
 * at a time, a page of {@code run_item} rows at a time. A shard that arrives (allocated here, or
 * moved here) is paged from its first item; one that leaves is forgotten, so that it is paged anew
 * if it comes back.
 */
final class ShardPaging {

  // hosted shards not yet paged to their end, and the seq to page each from
  private final Map<Integer, Integer> next = new TreeMap<>();
  private final Set<Integer> paged = new TreeSet<>();

  /** The shards this node hosts now. */
  void hosted(Set<Integer> shards) {
    next.keySet().retainAll(shards);
    paged.retainAll(shards);
    for (int shard : shards) {
      if (!paged.contains(shard)) {
        next.putIfAbsent(shard, 0);
      }
    }
  }

  /** The next shard to page, if any hosted shard has rows not paged in yet. */
  OptionalInt nextShard() {
    return next.isEmpty() ? OptionalInt.empty() : OptionalInt.of(next.keySet().iterator().next());
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

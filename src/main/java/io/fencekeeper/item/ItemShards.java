package io.fencekeeper.item;

import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.sharding.typed.HashCodeMessageExtractor;

/**
 * Which shard an item is in (the one shard function: sharding, staging and every node's dispatcher
 * use it), and which members the failure detector calls unreachable, so that work offered to a pool
 * there is handed out again at once (docs/design.md, "Dispatch on every node"). Written by {@link
 * ReachabilityWatch}, read by anyone on the node.
 */
public final class ItemShards {

  private final HashCodeMessageExtractor<WorkItem.Command> extractor;
  private final int numberOfShards;
  private volatile Set<Address> unreachable = Set.of();

  public ItemShards(int numberOfShards) {
    this.extractor = new HashCodeMessageExtractor<>(numberOfShards);
    this.numberOfShards = numberOfShards;
  }

  /** The extractor the entity is registered with, so both agree on every item's shard. */
  HashCodeMessageExtractor<WorkItem.Command> extractor() {
    return extractor;
  }

  public int numberOfShards() {
    return numberOfShards;
  }

  /** The item's shard, as sharding names it. */
  public String shardOf(ItemId item) {
    return extractor.shardId(item.value());
  }

  /**
   * The item's shard as a number (0 to {@link #numberOfShards()} - 1), as {@code run_item} keeps
   * it.
   */
  public int shardNumber(ItemId item) {
    return Integer.parseInt(shardOf(item));
  }

  /** Whether the failure detector calls the member unreachable. */
  public boolean isUnreachable(Address member) {
    return unreachable.contains(member);
  }

  synchronized void unreachable(Address member, boolean isUnreachable) {
    Set<Address> next = new HashSet<>(unreachable);
    if (isUnreachable) {
      next.add(member);
    } else {
      next.remove(member);
    }
    unreachable = Set.copyOf(next);
  }
}

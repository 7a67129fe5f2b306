package io.fencekeeper.item;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.sharding.typed.HashCodeMessageExtractor;

/**
 * Which member hosts the shard of an item, and whether that member can be reached: what lets the
 * dispatcher keep work away from a node that died until its shards have moved, instead of letting
 * every worker of the cluster wait on it (docs/design.md, "The dispatcher"). Written by {@link
 * ShardWatch}, read by anyone on the node; each read sees one consistent picture.
 */
public final class ItemShards {

  /**
   * One picture: the last known home of each shard, the members the failure detector calls
   * unreachable, and members suspected until a time because a command to one of their shards went
   * unanswered (the failure detector is slower than a worker's patience).
   */
  record Picture(
      Map<String, Address> homes, Set<Address> unreachable, Map<Address, Instant> suspectUntil) {}

  private final HashCodeMessageExtractor<WorkItem.Command> extractor;
  private final Clock clock;
  private volatile Picture picture = new Picture(Map.of(), Set.of(), Map.of());

  public ItemShards(int numberOfShards, Clock clock) {
    this.extractor = new HashCodeMessageExtractor<>(numberOfShards);
    this.clock = clock;
  }

  /** The extractor the entity is registered with, so both agree on every item's shard. */
  HashCodeMessageExtractor<WorkItem.Command> extractor() {
    return extractor;
  }

  public String shardOf(ItemId item) {
    return extractor.shardId(item.value());
  }

  /** The member that hosted the item's shard when last seen; empty when not known. */
  public Optional<Address> homeOf(ItemId item) {
    return Optional.ofNullable(picture.homes().get(shardOf(item)));
  }

  /**
   * Whether a command to the item can be expected to be answered now: its shard's home is neither
   * unreachable nor suspected. An unknown home counts as reachable: the shard is allocated on a
   * live member by the first command.
   */
  public boolean reachable(ItemId item) {
    Address home = picture.homes().get(shardOf(item));
    return home == null || isReachable(home);
  }

  /** Whether the failure detector calls the member unreachable. */
  public boolean isUnreachable(Address member) {
    return picture.unreachable().contains(member);
  }

  /** Whether the member is neither unreachable nor suspected now. */
  public boolean isReachable(Address member) {
    Picture p = picture;
    if (p.unreachable().contains(member)) {
      return false;
    }
    Instant until = p.suspectUntil().get(member);
    return until == null || !clock.instant().isBefore(until);
  }

  /**
   * A command to the item went unanswered: its shard's home is suspected for {@code duration}, so
   * its other items are not handed out before the failure detector has decided. Returns the member
   * now suspected, if its home was known and it is not {@code self} (nobody could do better than
   * this node itself).
   */
  public synchronized Optional<Address> suspect(ItemId item, Address self, Duration duration) {
    Address home = picture.homes().get(shardOf(item));
    if (home == null || home.equals(self)) {
      return Optional.empty();
    }
    Instant until = clock.instant().plus(duration);
    Map<Address, Instant> suspects = new HashMap<>(picture.suspectUntil());
    suspects.merge(home, until, (a, b) -> a.isAfter(b) ? a : b);
    picture = new Picture(picture.homes(), picture.unreachable(), Map.copyOf(suspects));
    return Optional.of(home);
  }

  synchronized void homes(Map<String, Address> homes) {
    picture = new Picture(Map.copyOf(homes), picture.unreachable(), picture.suspectUntil());
  }

  synchronized void unreachable(Set<Address> unreachable) {
    picture = new Picture(picture.homes(), Set.copyOf(unreachable), picture.suspectUntil());
  }

  /**
   * A member that left the cluster hosts nothing any more: its shards are allocated again on the
   * first command, and nothing about it is suspected.
   */
  synchronized void removed(Address member) {
    Map<String, Address> homes = new HashMap<>(picture.homes());
    homes.values().removeIf(member::equals);
    Map<Address, Instant> suspects = new HashMap<>(picture.suspectUntil());
    suspects.remove(member);
    Set<Address> unreachable = new HashSet<>(picture.unreachable());
    unreachable.remove(member);
    picture = new Picture(Map.copyOf(homes), Set.copyOf(unreachable), Map.copyOf(suspects));
  }

  Picture picture() {
    return picture;
  }
}

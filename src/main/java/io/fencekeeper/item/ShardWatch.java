package io.fencekeeper.item;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.GetClusterShardingStats;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * Keeps {@link ItemShards} current on this node: where each item shard lives (the sharding
 * statistics every {@code every}; a region that does not answer keeps its last known shards) and
 * which members the failure detector calls unreachable (cluster events, at once).
 */
public final class ShardWatch {

  private ShardWatch() {}

  private sealed interface Message {}

  private record Poll() implements Message {}

  private record Stats(ShardRegion.ClusterShardingStats stats) implements Message {}

  private record Reachability(ClusterEvent.ReachabilityEvent event) implements Message {}

  private record Removed(ClusterEvent.MemberRemoved event) implements Message {}

  private record Stop() implements Message {}

  public static Behavior<?> create(ItemShards shards, Duration every) {
    return Behaviors.<Message>setup(
        ctx -> {
          Cluster cluster = Cluster.get(ctx.getSystem());
          Address self = cluster.selfMember().address();
          cluster
              .subscriptions()
              .tell(
                  Subscribe.create(
                      ctx.messageAdapter(ClusterEvent.ReachabilityEvent.class, Reachability::new),
                      ClusterEvent.ReachabilityEvent.class));
          cluster
              .subscriptions()
              .tell(
                  Subscribe.create(
                      ctx.messageAdapter(ClusterEvent.MemberRemoved.class, Removed::new),
                      ClusterEvent.MemberRemoved.class));
          // a node that stops asks its shards nothing more: stopping shards answer late, and each
          // late one would be a warning in the log of every clean shutdown
          CoordinatedShutdown.get(ctx.getSystem())
              .addTask(
                  CoordinatedShutdown.PhaseBeforeServiceUnbind(),
                  "stop-shard-watch",
                  () -> {
                    ctx.getSelf().tell(new Stop());
                    return CompletableFuture.completedFuture(Done.getInstance());
                  });
          ActorRef<ShardRegion.ClusterShardingStats> statsTo =
              ctx.messageAdapter(ShardRegion.ClusterShardingStats.class, Stats::new);
          Set<Address> unreachable = new HashSet<>();
          Map<String, Address> homes = new HashMap<>();
          return Behaviors.withTimers(
              timers -> {
                timers.startTimerWithFixedDelay(new Poll(), every);
                return Behaviors.receive(Message.class)
                    .onMessage(
                        Poll.class,
                        poll -> {
                          ClusterSharding.get(ctx.getSystem())
                              .shardState()
                              .tell(
                                  new GetClusterShardingStats(
                                      WorkItem.ENTITY_TYPE_KEY, every, statsTo));
                          return Behaviors.same();
                        })
                    .onMessage(
                        Stats.class,
                        answer -> {
                          // regions that answered say where their shards are now; a shard
                          // that moved is found at its new home, a region that did not
                          // answer keeps what it last said
                          for (var region : answer.stats().getRegions().entrySet()) {
                            Address member =
                                region.getKey().hasLocalScope() ? self : region.getKey();
                            homes.values().removeIf(member::equals);
                            for (Object shard : region.getValue().getStats().keySet()) {
                              homes.put((String) shard, member);
                            }
                          }
                          shards.homes(homes);
                          return Behaviors.same();
                        })
                    .onMessage(
                        Reachability.class,
                        r -> {
                          Address member = r.event().member().address();
                          if (r.event() instanceof ClusterEvent.UnreachableMember) {
                            unreachable.add(member);
                          } else {
                            unreachable.remove(member);
                          }
                          shards.unreachable(unreachable);
                          return Behaviors.same();
                        })
                    .onMessage(Stop.class, stop -> Behaviors.stopped())
                    .onMessage(
                        Removed.class,
                        r -> {
                          Address member = r.event().member().address();
                          unreachable.remove(member);
                          homes.values().removeIf(member::equals);
                          shards.removed(member);
                          return Behaviors.same();
                        })
                    .build();
              });
        });
  }
}

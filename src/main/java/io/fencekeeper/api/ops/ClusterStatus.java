package io.fencekeeper.api.ops;

import io.fencekeeper.Stages;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.worker.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingQuery;
import org.apache.pekko.cluster.sharding.typed.GetClusterShardingStats;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * {@code GET /api/cluster}: the members and their status, which one hosts the run coordinator (the
 * singleton lives on the oldest Up member), the item shards and live items per node, and each
 * node's worker pool use. A part that does not answer in time is reported as unknown (null), never
 * as zero: an operator must not read "no items" when the truth is "no answer".
 */
public final class ClusterStatus {

  static final Duration ASK = Duration.ofSeconds(3);

  private final ActorSystem<?> system;

  public ClusterStatus(ActorSystem<?> system) {
    this.system = system;
  }

  public CompletionStage<ApiResponse> cluster(ApiCall call) {
    ClusterEvent.CurrentClusterState state = Cluster.get(system).state();
    CompletableFuture<Map<String, int[]>> shards = shardStats().exceptionally(failure -> null);
    CompletableFuture<Map<String, WorkerPool.Use>> pools = poolUse();
    return shards.thenCombine(pools, (byNode, use) -> ApiResponse.ok(body(state, byNode, use)));
  }

  private Map<String, Object> body(
      ClusterEvent.CurrentClusterState state,
      Map<String, int[]> shards,
      Map<String, WorkerPool.Use> pools) {
    Member self = Cluster.get(system).selfMember();
    Set<Member> unreachable = new HashSet<>(state.getUnreachable());
    Member oldestUp = null;
    List<Member> members = new ArrayList<>();
    state.getMembers().forEach(members::add);
    for (Member member : members) {
      if (member.status() == MemberStatus.up()
          && (oldestUp == null || member.isOlderThan(oldestUp))) {
        oldestUp = member;
      }
    }
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Member member : members) {
      String address = member.address().toString();
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("address", address);
      row.put("status", member.status().toString());
      row.put("roles", new TreeSet<>(member.getRoles()));
      row.put("reachable", !unreachable.contains(member));
      row.put("self", member.equals(self));
      row.put("coordinator", member.equals(oldestUp));
      int[] counts = shards == null ? null : shards.getOrDefault(address, new int[] {0, 0});
      row.put("shards", counts == null ? null : counts[0]);
      row.put("items", counts == null ? null : counts[1]);
      WorkerPool.Use use = pools.get(address);
      Map<String, Object> workers = new LinkedHashMap<>();
      workers.put("inFlight", use == null ? null : use.inFlight());
      workers.put("capacity", use == null ? null : use.capacity());
      row.put("workers", workers);
      rows.add(row);
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("self", self.address().toString());
    body.put("leader", state.getLeader() == null ? null : state.getLeader().toString());
    body.put("coordinator", oldestUp == null ? null : oldestUp.address().toString());
    body.put("shardStatsAnswered", shards != null);
    body.put("members", rows);
    return body;
  }

  /** Shards and live (started, not passivated) items per member address. */
  private CompletableFuture<Map<String, int[]>> shardStats() {
    return Stages.on(
            AskPattern.<ClusterShardingQuery, ShardRegion.ClusterShardingStats>ask(
                ClusterSharding.get(system).shardState(),
                replyTo -> new GetClusterShardingStats(WorkItem.ENTITY_TYPE_KEY, ASK, replyTo),
                ASK.plusSeconds(1),
                system.scheduler()),
            system.executionContext())
        .thenApply(
            stats -> {
              Map<String, int[]> byNode = new HashMap<>();
              for (Map.Entry<Address, ShardRegion.ShardRegionStats> region :
                  stats.getRegions().entrySet()) {
                int items = 0;
                for (Object count : region.getValue().getStats().values()) {
                  items += ((Number) count).intValue();
                }
                String address = nodeAddress(region.getKey());
                byNode.put(address, new int[] {region.getValue().getStats().size(), items});
              }
              return byNode;
            });
  }

  /** The local region answers with an address without host and port: that is this node. */
  private String nodeAddress(Address address) {
    return address.hasLocalScope()
        ? Cluster.get(system).selfMember().address().toString()
        : address.toString();
  }

  /** In flight and capacity of every node's worker pool (a node with 0 workers has none). */
  private CompletableFuture<Map<String, WorkerPool.Use>> poolUse() {
    return Stages.on(
            AskPattern.<Receptionist.Command, Receptionist.Listing>ask(
                system.receptionist(),
                replyTo -> Receptionist.find(WorkerPool.SERVICE_KEY, replyTo),
                ASK,
                system.scheduler()),
            system.executionContext())
        .thenCompose(
            listing -> {
              List<CompletableFuture<WorkerPool.Use>> asks = new ArrayList<>();
              for (ActorRef<WorkerPool.Command> pool :
                  listing.getServiceInstances(WorkerPool.SERVICE_KEY)) {
                asks.add(
                    Stages.on(
                            AskPattern.<WorkerPool.Command, WorkerPool.Use>ask(
                                pool, WorkerPool.GetUse::new, ASK, system.scheduler()),
                            system.executionContext())
                        .exceptionally(failure -> null));
              }
              return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new))
                  .thenApply(
                      done -> {
                        Map<String, WorkerPool.Use> byNode = new HashMap<>();
                        for (CompletableFuture<WorkerPool.Use> ask : asks) {
                          WorkerPool.Use use = ask.join();
                          if (use != null) {
                            byNode.put(use.node(), use);
                          }
                        }
                        return byNode;
                      });
            })
        .exceptionally(failure -> Map.of());
  }
}

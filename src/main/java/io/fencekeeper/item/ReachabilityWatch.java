package io.fencekeeper.item;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * Keeps {@link ItemShards}' unreachable members current on this node from the cluster's events: a
 * member the failure detector calls unreachable, until it is reachable again or removed. Nothing is
 * polled.
 */
public final class ReachabilityWatch {

  private ReachabilityWatch() {}

  private sealed interface Message {}

  private record Reachability(ClusterEvent.ReachabilityEvent event) implements Message {}

  private record Removed(ClusterEvent.MemberRemoved event) implements Message {}

  public static Behavior<?> create(ItemShards shards) {
    return Behaviors.<Message>setup(
        ctx -> {
          Cluster cluster = Cluster.get(ctx.getSystem());
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
          return Behaviors.receive(Message.class)
              .onMessage(
                  Reachability.class,
                  r -> {
                    shards.unreachable(
                        r.event().member().address(),
                        r.event() instanceof ClusterEvent.UnreachableMember);
                    return Behaviors.same();
                  })
              .onMessage(
                  Removed.class,
                  r -> {
                    shards.unreachable(r.event().member().address(), false);
                    return Behaviors.same();
                  })
              .build();
        });
  }
}

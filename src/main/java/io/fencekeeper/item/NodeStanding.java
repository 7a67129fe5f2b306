package io.fencekeeper.item;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Whether this node was downed: its own member is Down (the split-brain resolver's decision on
 * either side of a partition, or an operator's), or Removed after it had been a member. Read by
 * every item command, so it is one read of the cluster's own view of this node, which Pekko's
 * cluster events keep current. That view starts out as Removed until the first event, which is why
 * Removed counts only once this node was seen as a member.
 */
final class NodeStanding {

  private NodeStanding() {}

  static BooleanSupplier downed(ActorSystem<?> system) {
    Cluster cluster = Cluster.get(system);
    MemberStatus down = MemberStatus.down();
    MemberStatus removed = MemberStatus.removed();
    AtomicBoolean member = new AtomicBoolean();
    return () -> {
      MemberStatus status = cluster.selfMember().status();
      if (status.equals(removed)) {
        return member.get();
      }
      if (!member.get()) {
        member.set(true);
      }
      return status.equals(down);
    };
  }
}

package io.fencekeeper.dispatch;

import io.fencekeeper.worker.WorkProtocol.WorkBatch;
import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * The worker pools a dispatcher offers nothing more: those that said they are leaving (their node
 * shuts down and drains them), and those on a member that is leaving the cluster or is gone. An
 * offer to them would be claimed during the node's shutdown, or never, and the item would wait out
 * the lease. A pool is known by the {@code replyTo} of its requests; a restarted node's pool is a
 * new actor, so it is not taken for the old one.
 */
final class LeavingPools {

  private final Set<ActorRef<WorkBatch>> said = new HashSet<>();
  private final Cluster cluster;

  LeavingPools(Cluster cluster) {
    this.cluster = cluster;
  }

  void add(ActorRef<WorkBatch> pool) {
    said.add(pool);
  }

  /** {@code member}: the node of {@code pool}. */
  boolean contains(ActorRef<WorkBatch> pool, Address member) {
    if (said.contains(pool)) {
      return true;
    }
    for (Member m : cluster.state().getMembers()) {
      if (m.address().equals(member)) {
        MemberStatus status = m.status();
        return status == MemberStatus.leaving()
            || status == MemberStatus.exiting()
            || status == MemberStatus.down()
            || status == MemberStatus.removed();
      }
    }
    return false; // not a member yet as far as this node knows: a pool that just joined
  }
}

package io.fencekeeper.item;

import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Whether the node of a lease holder is still alive, read when its lapsed lease is taken over
 * (docs/design.md, "Lost holders count"). A poison item kills its holder's node, and by the time
 * the lease has lapsed that node is unreachable or gone: the partition inequality puts failure
 * detection well inside one lease. A holder whose node is still an Up member that everyone reaches
 * was not killed by the item: its renewals had nowhere to go (the item's entity moved with a node
 * that died) or its worker gave up while its node lived.
 *
 * <p>The holder's node is named by its worker id ({@code {node address}/w{n}}) and by the
 * incarnation (the node's cluster uid) journaled with its claim, so a node restarted at the same
 * address does not speak for the one the item killed.
 */
@FunctionalInterface
interface HolderNodes {

  /** No membership to read (an entity without a cluster, a replay): no holder is known alive. */
  HolderNodes UNKNOWN = (workerId, incarnation) -> false;

  /**
   * Whether the node of {@code workerId}, incarnation {@code incarnation} (0: not known), is an Up
   * member (or one leaving on its own) that no member finds unreachable.
   */
  boolean alive(String workerId, long incarnation);

  /** The cluster's current view on this node: a read of state Pekko's cluster events keep. */
  static HolderNodes of(ActorSystem<?> system) {
    Cluster cluster = Cluster.get(system);
    return (workerId, incarnation) -> {
      if (incarnation == 0) {
        return false;
      }
      CurrentClusterState state = cluster.state();
      for (Member member : state.getMembers()) {
        if (member.uniqueAddress().longUid() == incarnation
            && workerId.startsWith(NodeWorkers.prefix(member.address().toString()))) {
          return alive(member.status()) && !state.getUnreachable().contains(member);
        }
      }
      return false;
    };
  }

  private static boolean alive(MemberStatus status) {
    return status.equals(MemberStatus.up())
        || status.equals(MemberStatus.weaklyUp())
        || status.equals(MemberStatus.leaving());
  }
}

package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.HolderNodeAlive;
import io.fencekeeper.item.WorkItem.ItemQuarantined;
import io.fencekeeper.item.WorkItem.NotClaimable;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ManualClock;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * docs/design.md, "Lost holders count": a holder whose lease lapsed in silence is lost only if its
 * node is gone. The claim that takes the lease over reads the membership of the holder's node (the
 * incarnation it claimed from) and journals what it found, so a worker that went silent on a live
 * node (its renewals had nowhere to go) is not counted as a node the item killed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HolderNodeAliveTest {

  static final Duration LEASE = Duration.ofSeconds(30);
  static final String NODE_A = "pekko://fencekeeper@10.0.0.1:25520";
  static final String NODE_B = "pekko://fencekeeper@10.0.0.2:25520";
  static final String NODE_C = "pekko://fencekeeper@10.0.0.3:25520";
  static final AtomicInteger ITEMS = new AtomicInteger();

  final ActorTestKit testKit =
      ActorTestKit.create(
          EventSourcedBehaviorTestKit.config()
              .withFallback(ConfigFactory.parseString(WorkItemTest.SERIALIZATION)));

  /** The nodes the fake membership calls alive, as {@code address#incarnation}. */
  final Set<String> alive = ConcurrentHashMap.newKeySet();

  ManualClock clock;
  EventSourcedBehaviorTestKit<WorkItem.Command, WorkItem.Event, State> kit;

  @BeforeEach
  void newItem() {
    alive.clear();
    clock = ManualClock.at("2026-11-30T01:00:00Z");
    ItemId itemId =
        ItemId.of(
            "payment-reconciliation",
            LocalDate.parse("2026-11-29"),
            "acct-" + ITEMS.incrementAndGet(),
            "c-1");
    HolderNodes membership =
        (worker, incarnation) ->
            alive.contains(worker.substring(0, worker.lastIndexOf("/w")) + "#" + incarnation);
    kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(), WorkItem.create(itemId, clock, ItemSettings.defaults(), membership));
  }

  @AfterAll
  void stop() {
    testKit.shutdownTestKit();
  }

  Reply claim(String node, long incarnation, int worker) {
    return kit.<Reply>runCommand(
            r -> new WorkItem.Claim(node + "/w" + worker, LEASE, 20, incarnation, r))
        .reply();
  }

  /** Claims and goes silent: the lease runs out without a word from its holder. */
  Claimed claimAndFallSilent(String node, long incarnation, int worker) {
    Claimed claimed = assertInstanceOf(Claimed.class, claim(node, incarnation, worker));
    clock.advance(LEASE.plusSeconds(1));
    return claimed;
  }

  /**
   * Issue 36, part 1: a worker node paused past its lease and taken over (its worker gives up
   * without a word when it wakes), then the death of the node that holds the item next. Two silent
   * ends in a row, as a poison item makes at K = 2; but the paused node was still a member when its
   * lease was taken over, so only the killed one counts.
   */
  @Test
  void aSilentHolderWhoseNodeIsStillUpIsNotLostSoPauseThenKillIsNotPoison() {
    Claimed paused = claimAndFallSilent(NODE_A, 11, 1);
    alive.add(NODE_A + "#11"); // it wakes before detection: still an Up member
    var takeover = kit.<Reply>runCommand(r -> new WorkItem.Claim(NODE_B + "/w1", LEASE, 20, 22, r));
    HolderNodeAlive read = takeover.eventOfType(HolderNodeAlive.class);
    assertEquals(NODE_A + "/w1", read.workerId());
    assertEquals(paused.token(), read.token());
    assertEquals(2, takeover.events().size(), "the read, then the claim: " + takeover.events());
    assertEquals(List.of(), kit.getState().budget().lostHolders(), "the paused holder is not lost");
    clock.advance(LEASE.plusSeconds(1)); // node B is killed while it works on the item

    Claimed third = assertInstanceOf(Claimed.class, claim(NODE_C, 33, 1));

    assertEquals(3, third.attempt(), "granted, not quarantined");
    assertEquals(EffectStatus.AMBIGUOUS, third.effect());
    assertEquals(List.of(NODE_B + "/w1"), kit.getState().budget().lostHolders());
    assertEquals(2, kit.getState().budget().silentRun().size());
    assertEquals(kit.getState(), kit.restart().state(), "a replay decides the same");
  }

  /** The poison item kills each node that takes it: K = 2 holders whose nodes are gone. */
  @Test
  void holdersWhoseNodesAreGoneAreLostAndQuarantineThePoisonAtK() {
    claimAndFallSilent(NODE_A, 11, 1);
    claimAndFallSilent(NODE_B, 22, 1);

    var third = kit.<Reply>runCommand(r -> new WorkItem.Claim(NODE_C + "/w1", LEASE, 20, 33, r));

    assertEquals(Status.QUARANTINED, assertInstanceOf(NotClaimable.class, third.reply()).status());
    assertEquals(
        List.of(NODE_A + "/w1", NODE_B + "/w1"),
        third.eventOfType(ItemQuarantined.class).lostOwners());
    assertTrue(
        third.events().stream().noneMatch(HolderNodeAlive.class::isInstance),
        third.events()::toString);
  }

  /**
   * A node the item killed and that came back at the same address before its lease lapsed: its new
   * incarnation is an Up member, but not the one that held the item.
   */
  @Test
  void aNodeRestartedAtTheSameAddressDoesNotSpeakForTheOneTheItemKilled() {
    claimAndFallSilent(NODE_A, 11, 1);
    alive.add(NODE_A + "#12"); // killed, restarted and rejoined as incarnation 12
    claimAndFallSilent(NODE_A, 12, 1);
    alive.remove(NODE_A + "#12");
    alive.add(NODE_A + "#13"); // and again

    Reply third = claim(NODE_A, 13, 1);

    assertEquals(Status.QUARANTINED, assertInstanceOf(NotClaimable.class, third).status());
  }

  /**
   * A worker of the lease API names no node of this cluster: its node is not known (incarnation 0),
   * so its silence counts as before.
   */
  @Test
  void aHolderWithoutAKnownNodeIsLost() {
    alive.add(NODE_A + "#0");
    claimAndFallSilent(NODE_A, 0, 1);
    claimAndFallSilent(NODE_A, 0, 2);

    assertEquals(
        Status.QUARANTINED, assertInstanceOf(NotClaimable.class, claim(NODE_B, 22, 1)).status());
  }

  /**
   * The bound that membership cannot lift: an item whose holders all fall silent on live nodes
   * (they stall without dying) is quarantined after K + 1 silent ends in a row.
   */
  @Test
  void silentHoldersOnLiveNodesAreQuarantinedAfterKPlusOneSilentEnds() {
    alive.addAll(List.of(NODE_A + "#11", NODE_B + "#22", NODE_C + "#33"));
    claimAndFallSilent(NODE_A, 11, 1);
    claimAndFallSilent(NODE_B, 22, 1);
    claimAndFallSilent(NODE_C, 33, 1);

    var fourth = kit.<Reply>runCommand(r -> new WorkItem.Claim(NODE_A + "/w2", LEASE, 20, 11, r));

    assertEquals(Status.QUARANTINED, assertInstanceOf(NotClaimable.class, fourth.reply()).status());
    List<WorkItem.Event> events = fourth.events();
    assertInstanceOf(HolderNodeAlive.class, events.get(0), "the read: " + events);
    ItemQuarantined quarantined = assertInstanceOf(ItemQuarantined.class, events.get(1));
    assertTrue(quarantined.reason().startsWith("3 leases in a row"), quarantined.reason());
    assertEquals(List.of(), kit.getState().budget().lostHolders(), "none of them was lost");
  }

  /** The read itself: a real one-node cluster's view of its own member and of others. */
  @Test
  void theClusterViewKnowsAnUpMemberByAddressAndIncarnation() {
    ActorTestKit node =
        ActorTestKit.create(
            "holder-nodes",
            ConfigFactory.parseString(
                    "pekko.actor.provider = cluster\n"
                        + "pekko.remote.artery.canonical.hostname = 127.0.0.1\n"
                        + "pekko.remote.artery.canonical.port = 0\n"
                        + "pekko.loglevel = WARNING\n")
                .withFallback(ConfigFactory.load()));
    try {
      ActorSystem<?> system = node.system();
      Cluster cluster = Cluster.get(system);
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
      Await.until(
          Duration.ofSeconds(30),
          "the node Up",
          () -> cluster.selfMember().status(),
          status -> status.equals(MemberStatus.up()));
      UniqueAddress self = cluster.selfMember().uniqueAddress();
      String own = NodeWorkers.id(self.address().toString(), 3);
      HolderNodes membership = HolderNodes.of(system);

      assertTrue(membership.alive(own, self.longUid()), own);
      assertFalse(membership.alive(own, self.longUid() + 1), "another incarnation");
      assertFalse(membership.alive(own, 0), "no incarnation known");
      assertFalse(membership.alive(NODE_A + "/w3", self.longUid()), "another address");
      assertFalse(membership.alive("lease-api-worker", self.longUid()), "not a node's worker");
    } finally {
      node.shutdownTestKit();
    }
  }
}

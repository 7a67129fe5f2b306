package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.assertOneEffectPerKey;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.leasesGranted;
import static io.fencekeeper.cluster.ClusterFixture.nodeOf;
import static io.fencekeeper.cluster.ClusterFixture.startNode;
import static io.fencekeeper.cluster.ClusterFixture.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three nodes as three ActorSystems in this JVM on loopback, one shared PostgreSQL journal, one
 * simulated provider they all call over HTTP. A crash is an ActorSystem terminated without
 * coordinated shutdown: it never leaves, the others see it unreachable and the resolver downs it.
 */
class ThreeNodeClusterTest {

  static final int WORKERS = 3;

  SimProviderServer sim;
  HttpProvider provider;
  TestDatabases.Target db;
  final List<FencekeeperNode> nodes = new ArrayList<>();

  @BeforeEach
  void startCluster() throws Exception {
    // latency keeps items in flight long enough for a crash to catch leases
    sim = SimProviderServer.start(0, SimFaults.NONE.withLatency(120, 40), 11);
    provider = HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(5));
    db = TestDatabases.freshPostgres();
    Path dir = Files.createTempDirectory("fencekeeper-cluster");
    FencekeeperNode first =
        startNode(db, dir.resolve("n1"), List.of(), provider, WORKERS, crashable());
    nodes.add(first);
    List<String> seeds = List.of(first.system().address().toString());
    for (int n = 2; n <= 3; n++) {
      nodes.add(startNode(db, dir.resolve("n" + n), seeds, provider, WORKERS, crashable()));
    }
    Await.until(
        Duration.ofSeconds(30),
        "three Up members",
        () -> countUp(first) == 3 && countUp(nodes.get(1)) == 3 && countUp(nodes.get(2)) == 3);
  }

  /** terminate() then stops the node without leaving the cluster: the crash of a process. */
  static Map<String, Object> crashable() {
    return Map.of("pekko.coordinated-shutdown.run-by-actor-system-terminate", "off");
  }

  static long countUp(FencekeeperNode node) {
    var members = Cluster.get(node.system()).state().getMembers();
    long up = 0;
    for (var member : members) {
      if (member.status() == MemberStatus.up()) {
        up++;
      }
    }
    return up;
  }

  static boolean isMember(FencekeeperNode node, String address) {
    for (var member : Cluster.get(node.system()).state().getMembers()) {
      if (member.address().toString().equals(address)) {
        return true;
      }
    }
    return false;
  }

  @AfterEach
  void stopCluster() {
    for (FencekeeperNode node : nodes) {
      node.system().terminate();
    }
    for (FencekeeperNode node : nodes) {
      try {
        node.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } catch (Exception ignored) {
        // best effort: the next test uses its own database
      }
    }
    provider.close();
    sim.close();
  }

  void crash(FencekeeperNode node) throws Exception {
    String address = node.system().address().toString();
    node.system().terminate();
    node.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    nodes.remove(node);
    // the survivors' resolver downs it after failure detection + stable-after
    Await.until(
        Duration.ofSeconds(30),
        address + " removed by the survivors",
        () -> nodes.stream().allMatch(n -> !isMember(n, address)));
  }

  @Test
  void itemsSpreadOverAllThreeNodesAndEachKeyTakesEffectOnce() throws Exception {
    String job = "spread";
    List<AccountCursor> accounts = accounts(150);
    RunView created = createRun(nodes.get(0), job, accounts);
    RunView ended = awaitEnded(nodes.get(1), created.runId(), Duration.ofSeconds(60));
    assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());

    Map<Integer, Integer> histogram =
        assertOneEffectPerKey(nodes.get(2), job, accounts, sim.effects());
    Set<String> claimedBy =
        leasesGranted(nodes.get(0), job, accounts).stream()
            .map(lease -> nodeOf(lease.workerId()))
            .collect(Collectors.toCollection(TreeSet::new));
    Set<String> addresses =
        nodes.stream()
            .map(n -> n.system().address().toString())
            .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(addresses, claimedBy, "every node's workers claimed items");
    System.out.printf("spread: claims by node %s, effects-per-key %s%n", claimedBy, histogram);
  }

  @Test
  void nodeThatCrashesWithoutLeavingHasItsItemsReclaimedAfterLeaseExpiry() throws Exception {
    String job = "crash-member";
    List<AccountCursor> accounts = accounts(300);
    FencekeeperNode victim = nodes.get(2); // not the oldest: the coordinator stays put
    String victimAddress = victim.system().address().toString();
    RunView created = createRun(nodes.get(0), job, accounts);
    awaitDone(
        nodes.get(0), created.runId(), 100, Duration.ofSeconds(60), "a third of the run done");
    crash(victim);

    RunView ended = awaitEnded(nodes.get(0), created.runId(), Duration.ofSeconds(90));
    assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
    Map<Integer, Integer> histogram =
        assertOneEffectPerKey(nodes.get(1), job, accounts, sim.effects());
    List<WorkItem.LeaseGranted> leases = leasesGranted(nodes.get(0), job, accounts);
    long takenOver =
        leases.stream()
            .filter(
                l -> l.previousOwner() != null && nodeOf(l.previousOwner()).equals(victimAddress))
            .count();
    assertTrue(takenOver > 0, "the crashed node's leases were taken over after expiry");
    assertTrue(
        leases.stream().noneMatch(l -> l.at().isAfter(ended.endedAt()))
            && leases.stream()
                .filter(l -> nodeOf(l.workerId()).equals(victimAddress))
                .allMatch(l -> l.at().isBefore(ended.endedAt())),
        "no claim by the crashed node after it died");
    System.out.printf(
        "crash of %s: %d leases taken over, takeovers %d, effects-per-key %s%n",
        victimAddress, takenOver, ended.takeovers(), histogram);
  }

  @Test
  void coordinatorSingletonRestartsElsewhereWhenTheOldestNodeDiesAndTheRunContinues()
      throws Exception {
    String job = "crash-oldest";
    List<AccountCursor> accounts = accounts(300);
    FencekeeperNode oldest = nodes.get(0);
    RunView created = createRun(oldest, job, accounts);
    awaitDone(oldest, created.runId(), 100, Duration.ofSeconds(60), "a third of the run done");
    long doneBefore = view(oldest, created.runId()).orElseThrow().counts().done();
    crash(oldest);

    FencekeeperNode survivor = nodes.get(0);
    RunView ended = awaitEnded(survivor, created.runId(), Duration.ofSeconds(90));
    assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
    assertEquals(accounts.size(), ended.counts().done());
    Map<Integer, Integer> histogram = assertOneEffectPerKey(survivor, job, accounts, sim.effects());
    System.out.printf(
        "oldest node crashed with %d of %d done; the run went on from the journal: %s,"
            + " effects-per-key %s%n",
        doneBefore, accounts.size(), ended.state(), histogram);
  }
}

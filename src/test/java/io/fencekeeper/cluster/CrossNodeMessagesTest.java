package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.startNode;
import static io.fencekeeper.cluster.ClusterFixture.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.RemoteMessageCounter;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Each node dispatches the items whose shards it hosts, so an item's claim, provider calls and
 * commit stay on one node: in the steady state of a run on three nodes, fewer than one message in
 * five items crosses the network for Fencekeeper's own work (the coordinator's assignments and the
 * nodes' reports, once a second each, and item commands between nodes), counted by Artery itself.
 * Before, every item cost about 4.7 cross-node messages (offer, claim, commit, settlement...).
 */
class CrossNodeMessagesTest {

  static final int ITEMS = 3000;

  /** Fencekeeper's messages between nodes, and item commands that crossed to another node. */
  static boolean work(String messageClass) {
    return messageClass.startsWith("io.fencekeeper.")
        || messageClass.equals("org.apache.pekko.cluster.sharding.typed.ShardingEnvelope");
  }

  @Test
  void aRunOnThreeNodesSendsFewerThanOneMessageInFiveItemsBetweenThem() throws Exception {
    SimProviderServer sim = SimProviderServer.start(0, SimFaults.NONE.withLatency(5, 2), 3);
    HttpProvider provider =
        HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(5));
    TestDatabases.Target db = TestDatabases.freshPostgres();
    Path dir = Files.createTempDirectory("fencekeeper-messages");
    Map<String, Object> counted =
        Map.of(
            "pekko.remote.artery.advanced.instruments",
            List.of(RemoteMessageCounter.class.getName()));
    List<FencekeeperNode> nodes = new ArrayList<>();
    try {
      FencekeeperNode first = startNode(db, dir.resolve("n1"), List.of(), provider, 8, counted);
      nodes.add(first);
      List<String> seeds = List.of(first.system().address().toString());
      nodes.add(startNode(db, dir.resolve("n2"), seeds, provider, 8, counted));
      nodes.add(startNode(db, dir.resolve("n3"), seeds, provider, 8, counted));
      List<AccountCursor> accounts = accounts(ITEMS);
      RunView run = createRun(first, "messages", accounts);

      // the steady state: from a fifth of the run to four fifths
      awaitDone(first, run.runId(), ITEMS / 5, Duration.ofMinutes(3), "a fifth of the run");
      long doneBefore = view(first, run.runId()).orElseThrow().counts().done();
      Map<String, Long> before = RemoteMessageCounter.sent();
      awaitDone(first, run.runId(), ITEMS * 4 / 5, Duration.ofMinutes(3), "four fifths");
      Map<String, Long> after = RemoteMessageCounter.sent();
      long doneAfter = view(first, run.runId()).orElseThrow().counts().done();
      RunView ended = awaitEnded(first, run.runId(), Duration.ofMinutes(3));

      Map<String, Long> sent = RemoteMessageCounter.between(before, after);
      long items = doneAfter - doneBefore;
      long ours =
          sent.entrySet().stream().filter(e -> work(e.getKey())).mapToLong(e -> e.getValue()).sum();
      long all = sent.values().stream().mapToLong(Long::longValue).sum();
      System.out.printf(
          "CROSS-NODE MESSAGES: %d items done in the window; Fencekeeper's messages and item"
              + " commands between nodes %d (%.3f per item); everything Artery sent %d (%.3f per"
              + " item, cluster gossip, heartbeats and replication included)%n  by class: %s%n",
          items,
          ours,
          ours / (double) items,
          all,
          all / (double) items,
          sent.entrySet().stream()
              .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
              .limit(15)
              .map(e -> e.getKey().replaceAll("^.*\\.", "") + "=" + e.getValue())
              .collect(Collectors.joining(", ")));

      assertEquals(RunState.SUCCEEDED, ended.state());
      assertTrue(items > 0, "items were done in the window");
      assertTrue(
          ours <= items / 5,
          "Fencekeeper's cross-node messages per item: " + ours + " for " + items + " items");
    } finally {
      for (FencekeeperNode node : nodes) {
        node.system().terminate();
      }
      for (FencekeeperNode node : nodes) {
        node.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      provider.close();
      sim.close();
    }
  }
}

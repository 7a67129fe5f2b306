package io.fencekeeper.dispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.fencekeeper.item.ExternalWorkers;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemSettings;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.item.ShardedItems;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.worker.WorkProtocol;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.FishingOutcome;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node's dispatch agent on a one-node cluster that hosts the item shards (role {@code items}, the
 * WorkItem entity on an H2 journal, the run's rows in run_item): it starts a dispatcher for each
 * run it is assigned, stops the ones no longer assigned, replaces one whose run was resumed, and
 * tells the coordinator which shards its node hosts as they are allocated here.
 */
class DispatchAgentTest {

  static final Duration WITHIN = Duration.ofSeconds(20);
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final int ITEMS = 40;

  static Path dataDir;
  static ActorTestKit testKit;
  static RunItemStore store;
  static ExecutorService blocking;
  static ItemShards shards;
  static ShardedItems items;
  static ActorRef<DispatchProtocol.ToAgent> agent;

  @BeforeAll
  static void startNode() throws Exception {
    dataDir = Files.createTempDirectory("fencekeeper-dispatch-agent");
    JournalDatabase journal = TestDatabases.migrated(TestDatabases.h2File(dataDir));
    Config config =
        journal
            .pekkoConfig()
            .withFallback(
                FencekeeperNode.config(
                    Map.of(
                        "pekko.remote.artery.canonical.port",
                        0,
                        "pekko.cluster.roles",
                        List.of(WorkItem.HOST_ROLE),
                        "pekko.loglevel",
                        "WARNING",
                        "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook",
                        "off")));
    testKit = ActorTestKit.create("DispatchAgentTest", config);
    shards = new ItemShards(100);
    WorkItem.init(
        testKit.system(),
        Clock.systemUTC(),
        new ItemSettings(Duration.ofMinutes(5), 2),
        shards,
        ExternalWorkers.NONE);
    Cluster cluster = Cluster.get(testKit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    Await.until(
        WITHIN, "the node to be up", () -> cluster.selfMember().status() == MemberStatus.up());
    store = new RunItemStore(journal);
    blocking = Executors.newFixedThreadPool(2);
    items = new ShardedItems(testKit.system(), Duration.ofSeconds(10), Duration.ofSeconds(2));
    agent =
        testKit.spawn(
            DispatchAgent.create(
                new NodeDispatcher.Dependencies(
                    Clock.systemUTC(),
                    store,
                    items,
                    shards,
                    blocking,
                    Duration.ofSeconds(30),
                    Duration.ofSeconds(5),
                    4)));
  }

  @AfterAll
  static void stopNode() {
    testKit.shutdownTestKit();
    blocking.shutdownNow();
    store.close();
  }

  /** A run of {@link #ITEMS} accounts, staged with each row's shard. */
  static RunWork stage(String job, int resumes) {
    String scopeId = "scope-" + job;
    List<AccountCursor> accounts = new ArrayList<>();
    for (int i = 0; i < ITEMS; i++) {
      accounts.add(new AccountCursor("acct-" + i, "c-1"));
    }
    if (resumes == 0) {
      store.stage(
          scopeId,
          0,
          accounts,
          a -> shards.shardNumber(ItemId.of(job, DATE, a.accountId(), a.cursor())));
    }
    return new RunWork(
        job + "/" + DATE,
        scopeId,
        job,
        DATE,
        ITEMS,
        3,
        null,
        Instant.now().plus(Duration.ofHours(1)),
        resumes);
  }

  static void assign(TestProbe<DispatchProtocol.NodeReport> reports, RunWork... runs) {
    List<DispatchProtocol.Assignment> assignments = new ArrayList<>();
    for (RunWork run : runs) {
      assignments.add(new DispatchProtocol.Assignment(run, 4, false, List.of()));
    }
    agent.tell(new DispatchProtocol.Assignments(assignments, reports.getRef()));
  }

  static Set<ActorRef<ToDispatcher>> dispatchersOf(String runId) {
    ServiceKey<ToDispatcher> key = WorkProtocol.serviceKeyOf(runId);
    TestProbe<Receptionist.Listing> listing = testKit.createTestProbe();
    testKit.system().receptionist().tell(Receptionist.find(key, listing.getRef()));
    return listing.expectMessageClass(Receptionist.Listing.class).getServiceInstances(key);
  }

  static Set<ActorRef<ToDispatcher>> awaitDispatchers(String runId, int count) {
    return Await.until(
        WITHIN,
        count + " dispatchers of " + runId,
        () -> dispatchersOf(runId),
        s -> s.size() == count);
  }

  @Test
  void theAgentIsListedForTheCoordinator() {
    TestProbe<Receptionist.Listing> listing = testKit.createTestProbe();
    Await.until(
        WITHIN,
        "the agent under its key",
        () -> {
          testKit
              .system()
              .receptionist()
              .tell(Receptionist.find(DispatchProtocol.AGENT_KEY, listing.getRef()));
          return listing
              .expectMessageClass(Receptionist.Listing.class)
              .getServiceInstances(DispatchProtocol.AGENT_KEY);
        },
        agents -> agents.contains(agent));
  }

  @Test
  void anAssignedRunGetsADispatcherAndOneNoLongerAssignedIsStopped() {
    TestProbe<DispatchProtocol.NodeReport> reports = testKit.createTestProbe();
    RunWork run = stage("assigned", 0);

    assign(reports, run);
    ActorRef<ToDispatcher> dispatcher = awaitDispatchers(run.runId(), 1).iterator().next();

    assign(reports);
    awaitDispatchers(run.runId(), 0);
    TestProbe<Object> watcher = testKit.createTestProbe();
    watcher.expectTerminated(dispatcher, WITHIN);
  }

  @Test
  void aResumedRunGetsANewDispatcherInPlaceOfTheOldOne() {
    TestProbe<DispatchProtocol.NodeReport> reports = testKit.createTestProbe();
    RunWork run = stage("resumed", 0);
    assign(reports, run);
    ActorRef<ToDispatcher> first = awaitDispatchers(run.runId(), 1).iterator().next();

    assign(reports, stage("resumed", 1));

    ActorRef<ToDispatcher> second =
        Await.until(
                WITHIN,
                "another dispatcher in its place",
                () -> dispatchersOf(run.runId()),
                s -> s.size() == 1 && !s.contains(first))
            .iterator()
            .next();
    assertNotEquals(first, second);
    testKit.createTestProbe().expectTerminated(first, WITHIN);
    // its reports are the new incarnation's
    reports.fishForMessage(
        WITHIN,
        report ->
            report.runs().stream().anyMatch(r -> r.runId().equals(run.runId()) && r.resumes() == 1)
                ? FishingOutcomes.complete()
                : FishingOutcomes.continueAndIgnore());
    assign(reports);
    awaitDispatchers(run.runId(), 0);
  }

  @Test
  void reportsTheShardsItsNodeHostsOnceAnItemOfAShardWasAsked() throws Exception {
    TestProbe<DispatchProtocol.NodeReport> reports = testKit.createTestProbe();
    RunWork run = stage("hosted", 0);
    assign(reports, run);
    DispatchProtocol.NodeReport before =
        reports.expectMessageClass(DispatchProtocol.NodeReport.class, WITHIN);
    assertEquals(agent, before.agent());
    assertEquals(4, before.workers());
    // an item of the run whose shard this node does not host yet
    ItemId item =
        java.util.stream.IntStream.range(0, ITEMS)
            .mapToObj(i -> run.itemId("acct-" + i, "c-1"))
            .filter(i -> !before.hostedShards().contains(shards.shardNumber(i)))
            .findFirst()
            .orElseThrow();
    int shard = shards.shardNumber(item);

    assertTrue(
        items.get(item).toCompletableFuture().get(20, TimeUnit.SECONDS)
            instanceof WorkItem.Accepted);

    List<DispatchProtocol.NodeReport> seen =
        reports.fishForMessage(WITHIN, report -> hostsAndTallies(report, run.runId(), shard));
    DispatchProtocol.NodeReport after = seen.get(seen.size() - 1);
    assertTrue(after.hostedShards().contains(shard), after.toString());
    assertFalse(before.hostedShards().contains(shard));
    assign(reports);
    awaitDispatchers(run.runId(), 0);
  }

  /** The node hosts {@code shard}, and the run's dispatcher has paged it (a tally of it). */
  static FishingOutcome hostsAndTallies(
      DispatchProtocol.NodeReport report, String runId, int shard) {
    boolean tallied =
        report.runs().stream()
            .filter(r -> r.runId().equals(runId))
            .flatMap(r -> r.shards().stream())
            .anyMatch(t -> t.shard() == shard);
    return report.hostedShards().contains(shard) && tallied
        ? FishingOutcomes.complete()
        : FishingOutcomes.continueAndIgnore();
  }
}

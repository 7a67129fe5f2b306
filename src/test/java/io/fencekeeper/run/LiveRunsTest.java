package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.dispatch.DispatchProtocol;
import io.fencekeeper.dispatch.DispatchProtocol.Assignment;
import io.fencekeeper.dispatch.DispatchProtocol.Assignments;
import io.fencekeeper.dispatch.DispatchProtocol.DispatchFailure;
import io.fencekeeper.dispatch.DispatchProtocol.NodeReport;
import io.fencekeeper.dispatch.DispatchProtocol.RunReport;
import io.fencekeeper.dispatch.DispatchProtocol.ShardTally;
import io.fencekeeper.dispatch.DispatchProtocol.ToAgent;
import io.fencekeeper.dispatch.ScopeRows;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.FleetView;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.ScriptedItems;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's running runs as the nodes see them: every node gets one message with every run
 * and its slice, the slices of a run never above its cap and driven by what the nodes report; a
 * node that leaves holds nothing and the shards it hosted are woken at once; a coordinator that
 * just started leaves the nodes' slices alone until it heard them, and after that a silent node
 * holds nothing; a report of a run before its resume changes nothing; a stopping run is told to
 * every node, swept and counted.
 *
 * <p>Two actor systems stand for two nodes: the coordinator's (its agent a probe here) and another
 * (its agent a probe there, reached over Artery as a remote node's agent would be), since the
 * coordinator tells nodes apart by their agents' addresses.
 */
class LiveRunsTest {

  static final Duration WITHIN = Duration.ofSeconds(15);
  static final Instant NOW = LiveRunTest.NOW;
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final int SHARDS = 4;

  /** Normal and burst caps equal: the governor cannot move the cap while a test slices it. */
  static final GovernorSettings CAP_16 = GovernorSettings.defaults().withCaps(16, 16, 1);

  static ActorTestKit coordinatorNode;
  static ActorTestKit otherNode;
  static RunItemStore store;
  static ExecutorService blocking;
  static final ItemShards shards = new ItemShards(SHARDS);

  ScriptedItems items;
  TestProbe<Assignments> here;
  TestProbe<Assignments> there;
  // the probes as the nodes' agents: an agent accepts more than assignments, a probe needs no more
  ActorRef<ToAgent> hereAgent;
  ActorRef<ToAgent> thereAgent;
  // the other node's agent as the coordinator holds it: a remote reference
  ActorRef<ToAgent> thereSeenHere;
  Address thereAddress;
  TestProbe<RunCoordinator.Command> coordinator;

  @BeforeAll
  static void startNodes() throws Exception {
    Path dataDir = Files.createTempDirectory("fencekeeper-live-runs");
    store = new RunItemStore(TestDatabases.migrated(TestDatabases.h2File(dataDir)));
    blocking = Executors.newFixedThreadPool(2);
    coordinatorNode = ActorTestKit.create("LiveRunsCoordinator", nodeConfig());
    otherNode = ActorTestKit.create("LiveRunsOther", nodeConfig());
  }

  static com.typesafe.config.Config nodeConfig() {
    return FencekeeperNode.config(
        Map.of(
            "pekko.remote.artery.canonical.port", 0,
            "pekko.loglevel", "WARNING",
            "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off"));
  }

  @AfterAll
  static void stopNodes() {
    otherNode.shutdownTestKit();
    coordinatorNode.shutdownTestKit();
    blocking.shutdownNow();
    store.close();
  }

  @BeforeEach
  void freshNodes() {
    items = new ScriptedItems();
    here = coordinatorNode.createTestProbe(Assignments.class);
    there = otherNode.createTestProbe(Assignments.class);
    hereAgent = here.ref().unsafeUpcast();
    thereAgent = there.ref().unsafeUpcast();
    thereSeenHere =
        ActorRefResolver.get(coordinatorNode.system())
            .resolveActorRef(
                ActorRefResolver.get(otherNode.system()).toSerializationFormat(there.ref()));
    thereAddress = otherNode.system().address();
    coordinator = coordinatorNode.createTestProbe(RunCoordinator.Command.class);
  }

  // --- the tests
  // ----------------------------------------------------------------------------------

  @Test
  void everyNodeGetsOneMessageWithEveryRunAndSlicesFromTheirReportsWithinTheCap() {
    RunRecord nightly = stage("nightly-a", 8);
    RunRecord weekly = stage("weekly-a", 8);
    Steering steering = steering(Optional.empty());
    steering.run(
        live -> {
          live.agents(Set.of(hereAgent, thereSeenHere));
          live.start(nightly, CAP_16, false);
          live.start(weekly, CAP_16, false);
        });
    // "no runs" once for the listing, then one message per start
    Assignments hereFirst = here.receiveSeveralMessages(3, WITHIN).get(2);
    Assignments thereFirst = there.receiveSeveralMessages(3, WITHIN).get(2);
    assertEquals(
        Map.of(nightly.runId(), 8, weekly.runId(), 8), slices(hereFirst), "not heard: equal");
    assertEquals(Map.of(nightly.runId(), 8, weekly.runId(), 8), slices(thereFirst));

    // each node reports where its assignments told it to: this one has little left of nightly
    hereFirst
        .reportTo()
        .tell(
            report(
                hereAgent,
                List.of(),
                runReport(nightly, 0, 8, 8, 40),
                runReport(weekly, 0, 8, 8, 40)));
    thereFirst
        .reportTo()
        .tell(
            report(
                thereAgent,
                List.of(),
                runReport(nightly, 0, 8, 0, 2),
                runReport(weekly, 0, 8, 8, 40)));
    coordinator.awaitAssert(
        WITHIN,
        () -> {
          assertTrue(
              steering.<Boolean>ask(
                  live -> live.get(nightly.runId()).orElseThrow().hasReportFrom(node())));
          return null;
        });

    steering.commands().tell(new RunCoordinator.Tick());

    Assignments hereNow = here.receiveMessage(WITHIN);
    Assignments thereNow = there.receiveMessage(WITHIN);
    assertEquals(List.of(nightly.runId(), weekly.runId()), runIds(hereNow), "one message, both");
    assertEquals(List.of(nightly.runId(), weekly.runId()), runIds(thereNow));
    // the other may fill its old slice of 8 until the shrink reaches it: nobody grows into it yet
    assertEquals(8, slices(hereNow).get(nightly.runId()), "not before the other applies its 2");
    assertEquals(2, slices(thereNow).get(nightly.runId()), "no more than it can use");
    assertEquals(8, slices(hereNow).get(weekly.runId()));
    assertEquals(8, slices(thereNow).get(weekly.runId()));
    for (String runId : List.of(nightly.runId(), weekly.runId())) {
      int sum = slices(hereNow).get(runId) + slices(thereNow).get(runId);
      assertTrue(sum <= 16, runId + ": slices add up to " + sum + ", above the cap");
    }
    assertFalse(hereNow.runs().stream().anyMatch(Assignment::stopping));

    // the other reports its new slice: what it does not want goes to this one
    steering.run(
        live -> {
          live.reported(
              report(
                  thereSeenHere,
                  List.of(),
                  runReport(nightly, 0, 2, 0, 2),
                  runReport(weekly, 0, 8, 8, 40)));
          live.tick();
        });
    Assignments hereGrown = here.receiveMessage(WITHIN);
    there.receiveMessage(WITHIN);
    assertEquals(14, slices(hereGrown).get(nightly.runId()), "what the other does not want");

    // once the last run ended, a node hears "no runs" once; an idle tick sends nothing
    RunRecord monthly = stage("monthly-a", 4);
    steering.run(
        live -> {
          live.ended(nightly.runId());
          live.ended(weekly.runId());
          live.tick();
          live.start(monthly, CAP_16, false);
        });
    for (TestProbe<Assignments> node : List.of(here, there)) {
      List<Assignments> seen = node.receiveSeveralMessages(3, WITHIN);
      assertEquals(List.of(weekly.runId()), runIds(seen.get(0)));
      assertEquals(List.of(), runIds(seen.get(1)));
      assertEquals(List.of(monthly.runId()), runIds(seen.get(2)), "nothing for the tick");
    }
  }

  @Test
  void aNodeThatLeavesHoldsNothingItsShareGoesToTheOtherAndItsShardsAreWokenAtOnce() {
    RunRecord run = stage("nightly-b", 24);
    RunItemStore.ShardFigures figures = store.shardFigures(run.scopeId());
    Set<Integer> thereHosts = Set.of(2, 3);
    Set<ItemId> thereFirstItems =
        figures.firstItems().entrySet().stream()
            .filter(e -> thereHosts.contains(e.getKey()))
            .map(e -> run.itemId(e.getValue().accountId(), e.getValue().cursor()))
            .collect(Collectors.toSet());
    assertFalse(thereFirstItems.isEmpty(), "the other node hosts some of the run's items");
    Steering steering = steering(Optional.empty());
    steering.run(
        live -> {
          live.agents(Set.of(hereAgent, thereSeenHere));
          live.start(run, CAP_16, false);
          live.reported(report(hereAgent, List.of(0, 1), runReport(run, 0, 8, 8, 40)));
          live.reported(
              report(thereSeenHere, List.of(2, 3), holding(runReport(run, 0, 8, 8, 40), 5, 7)));
        });
    here.receiveSeveralMessages(2, WITHIN);
    there.receiveSeveralMessages(2, WITHIN);
    coordinator.awaitAssert(
        WITHIN,
        () -> {
          assertTrue(
              steering.<Boolean>ask(
                  live -> live.get(run.runId()).orElseThrow().shards().isPresent()));
          return null;
        });
    assertEquals(List.of(), items.names(), "every shard hosted: none woken");

    steering.run(live -> live.removed(thereAddress));

    Assignments afterRemoval = here.receiveMessage(WITHIN);
    assertEquals(Map.of(run.runId(), 16), slices(afterRemoval), "the whole cap");
    assertEquals(
        List.of(5, 7),
        afterRemoval.runs().get(0).lostLeases(),
        "what it had in flight: offered first where its shards arrive");
    assertEquals(thereFirstItems, asked(), "its shards woken, each by one of its items");

    // its last report, late, and a receptionist's listing that still names it bring nothing back:
    // a ghost would hold a slice of the cap and count among the fleet's nodes (a scale-in's node)
    steering.run(
        live -> {
          live.reported(
              report(thereSeenHere, List.of(2, 3), holding(runReport(run, 8, 8, 40), 5, 7)));
          live.agents(Set.of(hereAgent, thereSeenHere));
        });
    assertEquals(Map.of(run.runId(), 16), slices(here.receiveMessage(WITHIN)), "still all here");
    assertEquals(1, steering.<FleetView>ask(LiveRuns::fleet).nodes(), "one node dispatches");

    // the next second: the orphans' items answered, so their new host reports them soon; they are
    // not asked again (OrphanPokesTest: when they are); the node that left hears nothing. The fence
    // leaves the coordinator after the tick's messages, so it arrives after anything it sent there
    Assignments fence =
        new Assignments(List.of(), coordinatorNode.<NodeReport>createTestProbe().ref());
    steering.run(
        live -> {
          live.tick();
          thereSeenHere.tell(fence);
        });
    Assignments nextSecond = here.receiveMessage(WITHIN);
    assertEquals(Map.of(run.runId(), 16), slices(nextSecond));
    assertEquals(
        List.of(5, 7), nextSecond.runs().get(0).lostLeases(), "its shards have no host yet");
    assertEquals(
        thereFirstItems.size(),
        items.commands().size(),
        "an answered poke is not repeated at once");
    assertEquals(List.of(), there.receiveMessage(WITHIN).runs(), "the fence, nothing before it");

    // a node hosts them now: nobody is woken any more
    steering.run(
        live -> {
          live.reported(report(hereAgent, List.of(0, 1, 2, 3), runReport(run, 16, 16, 40)));
          live.tick();
        });
    assertEquals(
        List.of(),
        here.receiveMessage(WITHIN).runs().get(0).lostLeases(),
        "every shard hosted again: the lost leases are with their new host");
    assertEquals(thereFirstItems.size(), items.commands().size(), "no orphan left");
  }

  @Test
  void aRecoveredRunKeepsTheNodesSlicesUntilHeardAndAfterwardsASilentNodeHoldsNothing() {
    RunRecord nightly = stage("nightly-c", 8);
    RunRecord weekly = stage("weekly-c", 8);
    long bornNanos = System.nanoTime();
    // ticking as the coordinator does, faster: the learning window ends on its own
    Steering steering = steering(Optional.of(Duration.ofMillis(200)));
    steering.run(
        live -> {
          live.agents(Set.of(hereAgent, thereSeenHere));
          live.start(nightly, CAP_16, true);
          live.start(weekly, CAP_16, true);
          // what the previous coordinator gave: nightly only heard from here, weekly from both
          live.reported(
              report(
                  hereAgent,
                  List.of(),
                  runReport(nightly, 10, 10, 40),
                  runReport(weekly, 6, 6, 40)));
          live.reported(report(thereSeenHere, List.of(), runReport(weekly, 10, 2, 40)));
          live.tick();
        });

    for (TestProbe<Assignments> node : List.of(here, there)) {
      node.fishForMessage(
          WITHIN,
          a ->
              a.runs().isEmpty()
                  ? FishingOutcomes.continueAndIgnore()
                  : FishingOutcomes.complete());
      Assignments started = node.receiveMessage(WITHIN); // the second start: before any report
      assertEquals(
          Map.of(
              nightly.runId(),
              DispatchProtocol.KEEP_SLICE,
              weekly.runId(),
              DispatchProtocol.KEEP_SLICE),
          slices(started),
          "nothing heard yet: every node keeps what it has");
      Assignments ticked = node.receiveMessage(WITHIN);
      assertEquals(
          DispatchProtocol.KEEP_SLICE, slices(ticked).get(nightly.runId()), "not all heard");
      // the other reported applying 10 of weekly: until it reports its 8, this one keeps its 6
      assertEquals(
          node == here ? 6 : 8,
          slices(ticked).get(weekly.runId()),
          "every node heard: sliced at once, growth only into room nobody may use");
    }

    Assignments hereLearned = firstSliced(here, nightly);
    long waitedNanos = System.nanoTime() - bornNanos;
    Assignments thereLearned = firstSliced(there, nightly);
    assertTrue(
        waitedNanos >= LiveRuns.LEARN_FOR.toNanos(),
        "sliced after " + Duration.ofNanos(waitedNanos) + ", inside the learning window");
    assertEquals(8, slices(hereLearned).get(nightly.runId()), "above its fair part: shrunk");
    // the silent node is taken to hold nothing: it gets what the other cannot be using (10)
    assertEquals(6, slices(thereLearned).get(nightly.runId()));
  }

  @Test
  void aReportOfTheRunBeforeItsResumeNeitherCountsNorFailsTheResumedRun() {
    RunRecord run = stage("nightly-d", 12);
    RunRecord resumed = run.resumed(NOW.plus(Duration.ofHours(6)));
    Map<Integer, Long> totals = store.shardFigures(run.scopeId()).totals();
    List<Integer> all = List.copyOf(totals.keySet());
    Steering steering = steering(Optional.empty());
    steering.run(
        live -> {
          live.agents(Set.of(hereAgent));
          live.start(run, CAP_16, false);
          live.reported(report(hereAgent, all, runReport(run, 0, 8, 4, 8, tally(all.get(0), 3))));
          live.start(resumed, CAP_16, false);
        });
    coordinator.awaitAssert(
        WITHIN,
        () -> {
          assertTrue(
              steering.<Boolean>ask(
                  live ->
                      live.get(run.runId())
                          .filter(r -> r.record().resumes() == 1 && r.shards().isPresent())
                          .isPresent()));
          return null;
        });
    assertEquals(0, done(steering, run), "the resumed run starts from its own reports");

    // a late report of the first incarnation: every item settled, its dispatcher failing
    ShardTally[] settled =
        totals.entrySet().stream()
            .map(e -> tally(e.getKey(), e.getValue()))
            .toArray(ShardTally[]::new);
    steering.run(
        live ->
            live.reported(
                new NodeReport(
                    hereAgent,
                    4,
                    all,
                    List.of(runReport(run, 0, 8, 0, 0, settled)),
                    List.of(new DispatchFailure(run.runId(), 0, 3, "the old incarnation")))));
    assertEquals(0, done(steering, run), "its tallies are not the resumed run's");

    steering.run(
        live -> live.reported(report(hereAgent, all, runReport(resumed, 1, 8, 0, 0, settled))));
    // the first the coordinator hears is the count: no failure of the old incarnation before it
    RunCoordinator.ItemsCounted counted =
        assertInstanceOf(RunCoordinator.ItemsCounted.class, coordinator.receiveMessage(WITHIN));
    assertEquals(run.runId(), counted.runId());
    assertEquals(1, counted.resumes());
    assertNull(counted.failure());
    assertEquals(12L, counted.counts().values().stream().mapToLong(Long::longValue).sum());
    assertEquals(12, done(steering, run));

    // the resumed run's own dispatcher failing is passed on
    steering.run(
        live ->
            live.reported(
                new NodeReport(
                    hereAgent,
                    4,
                    all,
                    List.of(),
                    List.of(new DispatchFailure(run.runId(), 1, 3, "this incarnation")))));
    RunCoordinator.DispatchFailed failed =
        assertInstanceOf(RunCoordinator.DispatchFailed.class, coordinator.receiveMessage(WITHIN));
    assertTrue(failed.reason().contains("this incarnation"), failed.reason());
  }

  @Test
  void aStoppingRunIsToldToEveryNodeItsOpenItemsClosedAndThenItIsCounted() {
    RunRecord run = stage("nightly-e", 30);
    List<ScopeRows.StatusWrite> done = new ArrayList<>();
    Set<ItemId> open = new HashSet<>();
    for (int seq = 0; seq < 30; seq++) {
      if (seq % 3 == 0) {
        done.add(new ScopeRows.StatusWrite(seq, ScopeRows.DONE));
      } else {
        open.add(run.itemId("acct-" + seq, "c-1"));
      }
    }
    store.markStatuses(run.scopeId(), done);
    Steering steering = steering(Optional.empty());
    steering.run(
        live -> {
          live.agents(Set.of(hereAgent, thereSeenHere));
          live.start(run, CAP_16, false);
        });
    here.receiveSeveralMessages(2, WITHIN);
    there.receiveSeveralMessages(2, WITHIN);

    steering.run(live -> live.stop(run.runId(), new LiveRun.Stopping("cancelled", true)));

    for (TestProbe<Assignments> node : List.of(here, there)) {
      List<Assignment> runs = node.receiveMessage(WITHIN).runs();
      assertEquals(1, runs.size());
      assertTrue(runs.get(0).stopping(), "hand nothing more out");
    }
    RunCoordinator.ItemsCounted counted =
        assertInstanceOf(RunCoordinator.ItemsCounted.class, coordinator.receiveMessage(WITHIN));
    assertEquals(run.runId(), counted.runId());
    assertEquals(
        Map.of(ScopeRows.DONE, 10L, ScopeRows.CLOSED, 20L), counted.counts(), "counted swept");
    // (no node reports hosting a shard here: the shards' first items were woken too)
    List<ScriptedItems.Command> closes =
        items.commands().stream().filter(c -> c.name().equals(ScriptedItems.CLOSE)).toList();
    assertEquals(
        open,
        closes.stream().map(ScriptedItems.Command::item).collect(Collectors.toSet()),
        "every open item closed, no DONE one");
    assertEquals(open.size(), closes.size(), "each once");
    assertEquals(
        Set.of("cancelled"), closes.stream().map(c -> c.detail()).collect(Collectors.toSet()));
  }

  // --- the coordinator's part, wired as RunCoordinator wires it
  // -------------------------------------------------------------

  /** Something done to the live runs on the actor's thread, as a coordinator's handler does it. */
  /**
   * The fleet's signal from what the nodes report: a run that cannot finish in time at the rate its
   * items in flight complete wants more nodes, as many as its burst cap fills at the workers the
   * nodes report (not the coordinator's own setting); once it ended the fleet is idle.
   */
  @Test
  void aRunAtRiskWantsTheNodesItsBurstCapFillsAndTheFleetIsIdleOnceItEnded() {
    RunRecord nightly = stage("fleet-a", 400);
    Steering steering = steering(Optional.empty());
    steering.run(
        live -> {
          live.agents(Set.of(hereAgent, thereSeenHere));
          live.start(nightly, CAP_16, false);
        });
    // each node has 4 in flight and finishes 0.001 a second: 400 items take days, the run has 4 h
    for (ActorRef<ToAgent> agent : List.of(hereAgent, thereSeenHere)) {
      steering.run(
          live ->
              live.reported(
                  report(
                      agent,
                      List.of(),
                      new RunReport(
                          nightly.runId(),
                          nightly.resumes(),
                          8,
                          4,
                          8,
                          0.001,
                          0,
                          true,
                          List.of(),
                          List.of()))));
    }
    FleetView atRisk = steering.ask(LiveRuns::fleet);
    assertEquals(FleetPolicy.Reason.AT_RISK, atRisk.reason(), atRisk.detail());
    assertEquals(2, atRisk.nodes(), "the nodes that dispatch now");
    assertEquals(4, atRisk.workersPerNode(), "the workers the nodes report, not the setting's 8");
    assertEquals(4, atRisk.wanted(), "the burst cap of 16 at 4 workers a node");
    FleetPolicy.Need need = atRisk.runs().get(0);
    assertEquals(16, need.inFlight());
    assertTrue(need.detail().contains("burst cap"), need.detail());
    assertEquals(
        need,
        steering.<RunProgress>ask(live -> live.progressOf(nightly.runId()).orElseThrow()).fleet(),
        "the run view shows the run's own need");

    steering.run(live -> live.ended(nightly.runId()));
    FleetView idle = steering.ask(LiveRuns::fleet);
    assertEquals(FleetPolicy.Reason.IDLE, idle.reason());
    assertEquals(1, idle.wanted(), "down to the minimum");
    assertEquals(List.of(), idle.runs());
  }

  record Step(Consumer<LiveRuns> action) {}

  /** The steering actor: its commands, and its steps. */
  record Steering(ActorRef<RunCoordinator.Command> commands, ActorRef<Step> steps) {

    void run(Consumer<LiveRuns> action) {
      steps.tell(new Step(action));
    }

    /** Reads the live runs on the actor's thread (they are not safe to read from the test's). */
    @SuppressWarnings("unchecked")
    <T> T ask(Function<LiveRuns, T> question) {
      TestProbe<Object> answer = coordinatorNode.createTestProbe();
      steps.tell(new Step(live -> answer.ref().tell(question.apply(live))));
      return (T) answer.receiveMessage(WITHIN);
    }
  }

  Steering steering(Optional<Duration> tickEvery) {
    TestProbe<ActorRef<Step>> ready = coordinatorNode.createTestProbe();
    RunCoordinator.Dependencies deps =
        new RunCoordinator.Dependencies(
            Clock.fixed(NOW, ZoneOffset.UTC),
            store,
            null, // ended runs are the coordinator's, not the live runs'
            items,
            shards,
            blocking,
            CAP_16,
            new FleetPolicy.Settings(1, 10, 8, CAP_16.deadlineMargin()),
            Optional.empty());
    ActorRef<RunCoordinator.Command> commands =
        coordinatorNode.spawn(steering(deps, ready.ref(), coordinator.ref(), tickEvery));
    return new Steering(commands, ready.receiveMessage(WITHIN));
  }

  /**
   * Hands the live runs what the coordinator hands them; what they tell the coordinator to decide
   * (a count, a failing dispatcher) goes to {@code coordinator}.
   */
  static Behavior<RunCoordinator.Command> steering(
      RunCoordinator.Dependencies deps,
      ActorRef<ActorRef<Step>> ready,
      ActorRef<RunCoordinator.Command> coordinator,
      Optional<Duration> tickEvery) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  LiveRuns live =
                      new LiveRuns(
                          ctx,
                          deps,
                          ctx.messageAdapter(NodeReport.class, RunCoordinator.NodeReported::new),
                          ctx.messageAdapter(
                              BudgetKeeper.Share.class, RunCoordinator.ShareGranted::new));
                  // an adapter's function runs in the actor: the steps touch the live runs safely
                  ready.tell(
                      ctx.messageAdapter(
                          Step.class,
                          step -> {
                            step.action().accept(live);
                            return new RunCoordinator.IdleTick();
                          }));
                  tickEvery.ifPresent(
                      every -> timers.startTimerWithFixedDelay(new RunCoordinator.Tick(), every));
                  return Behaviors.receive(RunCoordinator.Command.class)
                      .onMessage(RunCoordinator.IdleTick.class, idle -> Behaviors.same())
                      .onMessage(
                          RunCoordinator.Tick.class,
                          tick -> {
                            live.tick();
                            return Behaviors.same();
                          })
                      .onMessage(
                          RunCoordinator.NodeReported.class,
                          reported -> {
                            live.reported(reported.report());
                            return Behaviors.same();
                          })
                      .onMessage(
                          RunCoordinator.ShardsCounted.class,
                          counted -> {
                            live.shardsCounted(counted);
                            return Behaviors.same();
                          })
                      .onMessage(
                          RunCoordinator.SweepFinished.class,
                          swept -> {
                            live.sweepFinished(swept.runId(), swept.resumes());
                            return Behaviors.same();
                          })
                      .onMessage(
                          RunCoordinator.ShareGranted.class,
                          granted -> {
                            live.shareGranted(granted.share());
                            return Behaviors.same();
                          })
                      .onAnyMessage(
                          message -> {
                            coordinator.tell(message);
                            return Behaviors.same();
                          })
                      .build();
                }));
  }

  // --- fixtures
  // -----------------------------------------------------------------------------------

  /** A run of {@code items} accounts, staged in run_item with each item's shard. */
  static RunRecord stage(String job, int items) {
    List<AccountCursor> accounts = new ArrayList<>();
    for (int i = 0; i < items; i++) {
      accounts.add(new AccountCursor("acct-" + i, "c-1"));
    }
    RunRequest request =
        new RunRequest(job, DATE, new Scope.Inline(accounts), NOW.plus(Duration.ofHours(4)), 3, 5);
    RunRecord run = RunRecord.created(request, "scope-" + job, items, "digest", NOW);
    store.stage(
        run.scopeId(), 0, accounts, a -> shards.shardNumber(run.itemId(a.accountId(), a.cursor())));
    return run;
  }

  static NodeReport report(ActorRef<ToAgent> agent, List<Integer> hosted, RunReport... runs) {
    return new NodeReport(agent, 4, hosted, List.of(runs), List.of());
  }

  static RunReport runReport(RunRecord run, int slice, int inFlight, int demand) {
    return runReport(run, run.resumes(), slice, inFlight, demand);
  }

  static RunReport runReport(
      RunRecord run, int resumes, int slice, int inFlight, int demand, ShardTally... shards) {
    return new RunReport(
        run.runId(), resumes, slice, inFlight, demand, 0.0, 0.0, true, List.of(shards), List.of());
  }

  /** {@code report} with {@code seqs} in flight. */
  static RunReport holding(RunReport report, Integer... seqs) {
    return new RunReport(
        report.runId(),
        report.resumes(),
        report.slice(),
        report.inFlight(),
        report.demand(),
        report.itemsPerSecond(),
        report.backlogAgeSeconds(),
        report.allPaged(),
        report.shards(),
        List.of(seqs));
  }

  /** Shard {@code shard} with {@code done} items DONE. */
  static ShardTally tally(int shard, long done) {
    return new ShardTally(shard, done, 0, 0, 0);
  }

  /** The other node, named as the coordinator names it. */
  String node() {
    return thereAddress.toString();
  }

  static Map<String, Integer> slices(Assignments assignments) {
    return assignments.runs().stream()
        .collect(Collectors.toMap(a -> a.run().runId(), Assignment::slice));
  }

  static List<String> runIds(Assignments assignments) {
    return assignments.runs().stream().map(a -> a.run().runId()).toList();
  }

  Set<ItemId> asked() {
    return items.commands().stream()
        .filter(c -> c.name().equals(ScriptedItems.GET))
        .map(ScriptedItems.Command::item)
        .collect(Collectors.toSet());
  }

  static long done(Steering steering, RunRecord run) {
    return steering.<Long>ask(live -> live.progressOf(run.runId()).orElseThrow().counts().done());
  }

  /**
   * Skips the messages in which {@code run}'s slice is kept, and answers the first that sets it.
   */
  static Assignments firstSliced(TestProbe<Assignments> node, RunRecord run) {
    List<Assignments> seen =
        node.fishForMessage(
            WITHIN,
            a ->
                slices(a).getOrDefault(run.runId(), DispatchProtocol.KEEP_SLICE)
                        == DispatchProtocol.KEEP_SLICE
                    ? FishingOutcomes.continueAndIgnore()
                    : FishingOutcomes.complete());
    return seen.get(seen.size() - 1);
  }
}

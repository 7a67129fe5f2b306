package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import io.fencekeeper.worker.WorkProtocol;
import io.fencekeeper.worker.WorkProtocol.RequestWork;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import io.fencekeeper.worker.WorkProtocol.WorkBatch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The run service on a node without workers (H2): lists page newest first through the runs the
 * coordinator holds and the ones filed when they ended, each once; a filed run is found; which runs
 * exist is answered from both; and the lease API's claim-next takes its item from this node's
 * dispatcher before any other node's.
 */
class RunServiceTest {

  static final Duration WITHIN = Duration.ofSeconds(30);
  static final LocalDate DATE = LocalDate.parse("2026-11-29");

  static Path dataDir;
  static FencekeeperNode node;
  static RunService runs;

  @BeforeAll
  static void startNode() throws Exception {
    dataDir = Files.createTempDirectory("fencekeeper-run-service");
    // no workers: nothing settles a run but a cancel or an external worker
    node =
        FencekeeperNode.builder(
                FencekeeperNode.config(TestNodes.overrides(TestDatabases.h2File(dataDir), dataDir)))
            .workers(0)
            .start()
            .awaitUp(WITHIN);
    runs = node.runs();
  }

  @AfterAll
  static void stopNode() {
    node.close();
  }

  static <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(WITHIN.toSeconds(), TimeUnit.SECONDS);
  }

  static RunRequest request(String job, LocalDate date, int accounts) {
    List<AccountCursor> scope = new ArrayList<>();
    for (int i = 1; i <= accounts; i++) {
      scope.add(new AccountCursor("a-" + i, "c-1"));
    }
    return new RunRequest(
        job, date, new Scope.Inline(scope), Instant.now().plus(Duration.ofHours(2)), 3, 0);
  }

  static RunView create(RunRequest request) throws Exception {
    return assertInstanceOf(RunCoordinator.Created.class, await(runs.create(request))).run();
  }

  /** Whether the coordinator itself still holds the run (it forgets it once it is filed). */
  static boolean held(String runId) throws Exception {
    RunCoordinator.RunLookup lookup =
        await(
            AskPattern.<RunCoordinator.Command, RunCoordinator.RunLookup>ask(
                node.coordinator(),
                replyTo -> new RunCoordinator.GetRun(runId, replyTo),
                WITHIN,
                node.system().scheduler()));
    return lookup.run() != null;
  }

  /** Cancels the run and waits until it has ended and been filed. */
  static void cancelAndFile(String runId) throws Exception {
    assertInstanceOf(RunCoordinator.ControlAccepted.class, await(runs.cancel(runId)));
    Await.until(
        WITHIN,
        "run " + runId + " filed",
        () -> {
          try {
            return !held(runId);
          } catch (Exception e) {
            return false;
          }
        });
  }

  @Test
  void listsPageNewestFirstThroughHeldAndFiledRunsEachOnce() throws Exception {
    List<RunView> created = new ArrayList<>();
    for (int day = 1; day <= 5; day++) {
      created.add(create(request("listed", DATE.minusDays(day), 1)));
    }
    cancelAndFile(created.get(1).runId());
    cancelAndFile(created.get(3).runId());

    List<RunView> listed = new ArrayList<>();
    RunFilter.Cursor after = null;
    for (int page = 0; page < 5; page++) {
      RunService.RunPage answer =
          await(runs.list(new RunFilter(Set.of(), "listed", null, null, after, 2)));
      listed.addAll(answer.runs());
      assertTrue(answer.runs().size() <= 2);
      if (answer.next().isEmpty()) {
        break;
      }
      after = answer.next().get();
    }

    List<String> expected =
        created.stream().sorted(RunFilter.NEWEST_FIRST).map(RunView::runId).toList();
    assertEquals(expected, listed.stream().map(RunView::runId).toList());
    Map<String, RunState> states = new java.util.TreeMap<>();
    listed.forEach(run -> states.put(run.runId(), run.state()));
    assertEquals(RunState.CANCELLED, states.get(created.get(1).runId()), "a filed run");
    assertEquals(RunState.RUNNING, states.get(created.get(0).runId()), "a held run");

    List<RunView> cancelled =
        await(runs.list(new RunFilter(Set.of(RunState.CANCELLED), "listed", null, null, null, 10)))
            .runs();
    assertEquals(
        Set.of(created.get(1).runId(), created.get(3).runId()),
        Set.copyOf(cancelled.stream().map(RunView::runId).toList()));
  }

  @Test
  void getFindsARunFiledWhenItEnded() throws Exception {
    RunView run = create(request("filed", DATE, 2));
    cancelAndFile(run.runId());

    RunView found = await(runs.get(run.runId())).orElseThrow();

    assertEquals(RunState.CANCELLED, found.state());
    assertEquals(run.createdAt(), found.createdAt());
    assertEquals(2, found.counts().total());
    assertTrue(found.endedAt() != null, "as filed: " + found);
    assertEquals(Optional.empty(), await(runs.get("filed/2000-01-01")));
  }

  @Test
  void existingNamesTheHeldAndTheFiledRunsOnly() throws Exception {
    RunView running = create(request("existing", DATE, 1));
    RunView ended = create(request("existing", DATE.minusDays(1), 1));
    cancelAndFile(ended.runId());

    Set<String> found =
        await(runs.existing(Set.of(running.runId(), ended.runId(), "existing/2000-01-01")));

    assertEquals(Set.of(running.runId(), ended.runId()), found);
  }

  @Test
  void claimNextTakesItsItemFromThisNodesDispatcherBeforeAnyOther() throws Exception {
    RunView run = create(request("claimed", DATE, 2));
    // another member of the cluster, with a dispatcher of the same run that has nothing to give
    ActorTestKit other =
        ActorTestKit.create(
            FencekeeperNode.SYSTEM_NAME,
            FencekeeperNode.config(
                Map.of(
                    "pekko.remote.artery.canonical.port",
                    0,
                    "pekko.persistence.journal.auto-start-journals",
                    List.of(),
                    "pekko.loglevel",
                    "WARNING",
                    "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook",
                    "off")));
    try {
      Cluster cluster = Cluster.get(other.system());
      cluster.manager().tell(Join.create(Cluster.get(node.system()).selfMember().address()));
      Await.until(
          WITHIN, "the other member up", () -> cluster.selfMember().status() == MemberStatus.up());
      List<RequestWork> askedElsewhere = new CopyOnWriteArrayList<>();
      ActorRef<ToDispatcher> elsewhere =
          other.spawn(
              Behaviors.setup(
                  ctx ->
                      Behaviors.receiveMessage(
                          message -> {
                            if (message instanceof RequestWork request) {
                              askedElsewhere.add(request);
                              request
                                  .replyTo()
                                  .tell(
                                      new WorkBatch(run.runId(), List.of(), false, ctx.getSelf()));
                            }
                            return Behaviors.same();
                          })),
              "dispatcher-elsewhere");
      other
          .system()
          .receptionist()
          .tell(Receptionist.register(WorkProtocol.serviceKeyOf(run.runId()), elsewhere));
      Await.until(
          WITHIN,
          "both dispatchers of the run listed on this node",
          () -> dispatchers(run.runId()).size() == 2);

      // once this node's dispatcher has the run's items (its shards allocated here), every
      // claim comes from it without a word to the other member
      Set<String> claimed = new TreeSet<>();
      Await.until(
          WITHIN,
          "the run's two items claimed",
          () -> {
            int asked = askedElsewhere.size();
            Optional<WorkItem.Claimed> next = claimNext(run.runId());
            next.ifPresent(
                c -> {
                  assertEquals(asked, askedElsewhere.size(), "asked elsewhere for " + c.itemId());
                  claimed.add(c.itemId());
                });
            return claimed.size() == 2;
          });
      assertEquals(Set.of(run.runId() + "/a-1/c-1", run.runId() + "/a-2/c-1"), claimed);

      int asked = askedElsewhere.size();
      assertEquals(Optional.empty(), claimNext(run.runId()), "each item is handed out once");
      assertEquals(asked + 1, askedElsewhere.size(), "nothing here: the other member is asked");
      assertTrue(
          askedElsewhere.stream().allMatch(r -> r.max() == 1 && r.answerNow() && !r.steal()),
          askedElsewhere.toString());
    } finally {
      other.shutdownTestKit();
    }
  }

  static Optional<WorkItem.Claimed> claimNext(String runId) {
    try {
      return await(runs.claimNext(runId, "ext-1", Duration.ofSeconds(30)));
    } catch (Exception e) {
      throw new AssertionError("claim-next failed", e);
    }
  }

  static Set<ActorRef<ToDispatcher>> dispatchers(String runId) {
    var key = WorkProtocol.serviceKeyOf(runId);
    TestProbe<Receptionist.Listing> listing = TestProbe.create(node.system());
    node.system().receptionist().tell(Receptionist.find(key, listing.getRef()));
    return listing.expectMessageClass(Receptionist.Listing.class).getServiceInstances(key);
  }
}

package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.DatabaseLink;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.ScriptedItems;
import io.fencekeeper.testing.TestDatabases;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The run coordinator outlives an outage of its journal's database. The soak (scripts/soak.sh, seed
 * 2; docs/testing.md, "The soak") stopped PostgreSQL for 11 s: the coordinator's write of its
 * counters failed, Pekko's persistence stopped the actor (a journal failure stops an event-sourced
 * actor unless it is given a back-off; the singleton's restart-with-backoff around it never sees
 * that failure), and from then on no node answered a run: the night stayed RUNNING past its
 * deadline, for good. The coordinator runs on PostgreSQL through a link the test cuts, as the
 * outage cut it.
 */
class RunCoordinatorJournalOutageTest {

  static final Duration WITHIN = Duration.ofSeconds(60);

  @Test
  void aWriteThatFailsWhileTheDatabaseIsDownRestartsTheCoordinatorOnceItIsBack() throws Exception {
    TestDatabases.Target db = TestDatabases.freshPostgres();
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger coordinatorLog = (Logger) LoggerFactory.getLogger(RunCoordinator.class);
    log.start();
    coordinatorLog.addAppender(log);
    ExecutorService blocking = Executors.newFixedThreadPool(2);
    try (DatabaseLink link = new DatabaseLink(db.url())) {
      JournalDatabase journal =
          TestDatabases.migrated(
              new TestDatabases.Target("linked", link.url(db.url()), db.user(), db.password()));
      ActorTestKit kit =
          ActorTestKit.create(
              "RunCoordinatorJournalOutageTest",
              journal
                  .pekkoConfig()
                  .withFallback(
                      FencekeeperNode.config(
                          Map.of(
                              "pekko.remote.artery.canonical.port", 0,
                              "pekko.loglevel", "WARNING",
                              "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off"))));
      RunItemStore store = new RunItemStore(journal);
      try {
        GovernorSettings defaults = GovernorSettings.defaults();
        ActorRef<RunCoordinator.Command> coordinator =
            kit.spawn(
                RunCoordinator.create(
                    new RunCoordinator.Dependencies(
                        ManualClock.at("2026-11-30T01:00:00Z"),
                        store,
                        EndedRuns.on(
                            store,
                            JacksonObjectMapperProvider.get(Adapter.toClassic(kit.system()))
                                .getOrCreate("jackson-json", Optional.empty())),
                        new ScriptedItems(),
                        new ItemShards(4),
                        blocking,
                        defaults,
                        new FleetPolicy.Settings(1, 10, 8, defaults.deadlineMargin()),
                        Optional.empty())));
        GovernorSettings kept = defaults.withCaps(7, 9, 1);
        TestProbe<RunCoordinator.GovernorReply> set = kit.createTestProbe();
        coordinator.tell(new RunCoordinator.SetGovernor(kept, set.ref()));
        set.receiveMessage(WITHIN);

        link.cut();
        coordinator.tell(new RunCoordinator.SetGovernor(defaults.withCaps(3, 4, 1), set.ref()));
        Await.until(
            WITHIN,
            "the coordinator's write failed while the database was cut off",
            () -> failedWrites(log) > 0);
        link.mend();

        GovernorSettings answered =
            Await.until(
                WITHIN,
                "the coordinator answers again once the database is back",
                () -> governor(kit, coordinator),
                settings -> settings != null);
        assertEquals(kept, answered, "recovered from its journal: the failed write was not made");
      } finally {
        kit.shutdownTestKit();
        store.close();
      }
    } finally {
      blocking.shutdownNow();
      coordinatorLog.detachAppender(log);
    }
  }

  private static long failedWrites(ListAppender<ILoggingEvent> log) {
    List<ILoggingEvent> events = List.copyOf(log.list);
    return events.stream()
        .filter(e -> e.getLevel() == Level.ERROR)
        .filter(e -> e.getFormattedMessage().contains("Failed to persist"))
        .count();
  }

  /** The governor's settings, or null when the coordinator does not answer within 2 s. */
  private static GovernorSettings governor(
      ActorTestKit kit, ActorRef<RunCoordinator.Command> coordinator) {
    TestProbe<RunCoordinator.GovernorReply> probe = kit.createTestProbe();
    coordinator.tell(new RunCoordinator.GetGovernor(probe.ref()));
    try {
      return probe.receiveMessage(Duration.ofSeconds(2)).settings();
    } catch (AssertionError noAnswer) {
      return null;
    }
  }
}

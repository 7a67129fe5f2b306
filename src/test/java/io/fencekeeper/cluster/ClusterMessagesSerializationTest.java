package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.dispatch.DispatchProtocol;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.budget.ThrottleShare;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.FleetView;
import io.fencekeeper.testing.WireRoundTrip;
import io.fencekeeper.worker.AttemptResult;
import io.fencekeeper.worker.WorkProtocol;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * What a worker on one node tells the dispatcher on another survives the wire: a result that does
 * not deserialize is dropped by remoting, and the dispatcher only learns of it when the lease and
 * the offer grace have passed.
 */
class ClusterMessagesSerializationTest {

  static final ActorTestKit testKit =
      ActorTestKit.create(
          FencekeeperNode.config(
              Map.of(
                  "pekko.actor.provider", "local",
                  "pekko.actor.serialize-messages", "off")));

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void everyAttemptResultCrossesTheWireToTheDispatcher() {
    List<AttemptResult> results =
        List.of(
            new AttemptResult.Done(),
            new AttemptResult.Failed("permanent"),
            new AttemptResult.RetryAt(Instant.parse("2026-11-29T01:00:00Z")),
            new AttemptResult.Held(Instant.parse("2026-11-29T01:00:30Z")),
            new AttemptResult.Lost("stale token"),
            new AttemptResult.Closed(),
            new AttemptResult.Quarantined("holder lost 2 times in a row (w-1, w-2)"),
            new AttemptResult.Abandoned("no answer"));
    for (AttemptResult result : results) {
      WorkProtocol.Settled settled = new WorkProtocol.Settled(7, result);
      assertEquals(settled, roundTrip(settled));
    }
  }

  /**
   * A pool's word of the calls it made for a stolen item's run reaches its dispatcher, and the
   * dispatcher's report carries them to the coordinator.
   */
  @Test
  void theProviderCallsOfARunCrossTheWire() {
    var calls = new ThrottleShare.Calls(480, 31, 250);
    var made = new WorkProtocol.CallsMade(calls);
    assertEquals(made, roundTrip(made));
    var report =
        new DispatchProtocol.RunReport(
            "nightly/2026-11-29", 0, 8, 3, 8, 4.5, 1.0, true, List.of(), List.of(2, 5), calls);
    assertEquals(report, roundTrip(report));
  }

  /**
   * Issue 51: the lease API's ending of an attempt reaches every dispatcher of the run, and a
   * dispatcher's empty answer to claim-next says why, across nodes.
   */
  @Test
  void claimNextsMessagesCrossTheWire() {
    var item =
        io.fencekeeper.item.ItemId.of(
            "nightly", java.time.LocalDate.parse("2026-11-29"), "acct-1", "c-1");
    var ended = new WorkProtocol.SettledElsewhere(item, new AttemptResult.Done());
    assertEquals(ended, roundTrip(ended));
    var empty =
        new WorkProtocol.WorkBatch(
            "nightly/2026-11-29",
            List.of(),
            false,
            testKit.<WorkProtocol.ToDispatcher>createTestProbe().getRef(),
            false,
            WorkProtocol.NothingNow.AT_CAP,
            Instant.parse("2026-11-29T01:00:01Z"));
    assertEquals(empty, testKit.serializationTestKit().verifySerialization(empty, true));
  }

  /** A leaving pool's word reaches a dispatcher on another node, with the pool to drop. */
  @Test
  void aLeavingPoolCrossesTheWire() {
    var leaving =
        new WorkProtocol.PoolLeaving(testKit.<WorkProtocol.WorkBatch>createTestProbe().getRef());
    // with an actor ref inside: the test kit sets up what remoting sets up for the ref's address
    assertEquals(leaving, testKit.serializationTestKit().verifySerialization(leaving, true));
  }

  /** A run's figures travel from its dispatcher to the coordinator, and are journaled there. */
  @Test
  void runProgressWithQuarantinedItemsCrossesTheWire() {
    var progress =
        new io.fencekeeper.run.RunProgress(
            new io.fencekeeper.run.Counts(10, 2, 1, 5, 0, 0, 2),
            3,
            4,
            null,
            null,
            new FleetPolicy.Need("nightly/2026-11-29", 48, FleetPolicy.Reason.AT_RISK, "why"));
    assertEquals(progress, roundTrip(progress));
  }

  /** The coordinator's fleet signal answers a node's API, wherever the singleton runs. */
  @Test
  void theFleetSignalCrossesTheWire() {
    var fleet =
        new FleetView(
            Instant.parse("2026-11-29T01:00:00Z"),
            2,
            3,
            FleetPolicy.Reason.AT_RISK,
            "48 items in flight needed at 16 workers a node",
            1,
            10,
            16,
            List.of(
                new FleetPolicy.Need(
                    "nightly/2026-11-29", 48, FleetPolicy.Reason.AT_RISK, "needs 48, has 16")));
    assertEquals(fleet, roundTrip(fleet));
  }

  /** The pool's answer to the dashboard's cluster view comes from every node. */
  @Test
  void aPoolsUseCrossesTheWire() {
    var use = new io.fencekeeper.worker.WorkerPool.Use("pekko://fencekeeper@10.0.0.1:25520", 3, 32);
    assertEquals(use, roundTrip(use));
  }

  private static Object roundTrip(Object message) {
    return WireRoundTrip.roundTrip(testKit.system(), message);
  }
}

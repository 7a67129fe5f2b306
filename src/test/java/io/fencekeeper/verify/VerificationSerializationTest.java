package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.testing.WireRoundTrip;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * What a node asks the keeper on another node, what it answers, and what the keeper and each
 * verification journal, written by the serializer remoting and the journal pick (Jackson CBOR) and
 * read back equal: a message that does not deserialize is dropped by remoting, an event that does
 * not would make the journal unreadable.
 */
class VerificationSerializationTest {

  static final ActorTestKit testKit =
      ActorTestKit.create(
          FencekeeperNode.config(
              Map.of(
                  "pekko.actor.provider", "local",
                  "pekko.actor.serialize-messages", "off")));

  static final Instant AT = Instant.parse("2026-11-30T02:03:04.005Z");
  static final VerificationPlan PLAN =
      new VerificationPlan(
          "payment-reconciliation/2026-11-29",
          2,
          "payment-reconciliation",
          LocalDate.parse("2026-11-29"),
          "scope-7",
          "payments",
          5000,
          100,
          77,
          true,
          AT);
  static final Finding MISSING =
      new Finding(
          41,
          "payment-reconciliation/2026-11-29/acct-1/c-1",
          "fk-0123",
          Outcome.MISSING,
          "DONE",
          "RECORDED",
          "APPLIED",
          "sim-eff-7",
          null,
          null);
  static final Finding RESOLVED =
      new Finding(
          42,
          "payment-reconciliation/2026-11-29/acct-2/c-1",
          "fk-0456",
          Outcome.RESOLVED,
          "CLOSED",
          "AMBIGUOUS",
          null,
          null,
          "sim-eff-9",
          AT);
  static final VerificationView VIEW =
      new VerificationView(
          PLAN.runId(),
          2,
          VerificationView.Status.FAILED,
          "payments",
          5000,
          100,
          77,
          100,
          2400,
          new Tally(40, 1, 0, 0, 1, 0),
          List.of(MISSING, RESOLVED),
          2,
          true,
          AT,
          AT.plusSeconds(30),
          "the lookup of item ... refused");

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  static Object roundTrip(Object message) {
    return WireRoundTrip.roundTrip(testKit.system(), message);
  }

  @Test
  void theKeepersAnswersCrossTheWire() {
    for (Object reply :
        List.of(
            new VerificationKeeper.Accepted(VIEW),
            new VerificationKeeper.AlreadyRunning(VIEW),
            new VerificationKeeper.Refused("run_not_ended", "run x is RUNNING"),
            new VerificationKeeper.Answer(VIEW),
            new VerificationKeeper.Answer(null),
            new VerificationKeeper.Listing(List.of(VIEW.summary())))) {
      assertEquals(reply, roundTrip(reply));
    }
  }

  @Test
  void aRequestCrossesTheWireWithItsReplyTo() {
    var start =
        new VerificationKeeper.Start(
            PLAN, testKit.<VerificationKeeper.StartReply>createTestProbe().getRef());
    var get =
        new VerificationKeeper.Get(
            PLAN.runId(), 0, testKit.<VerificationKeeper.Answer>createTestProbe().getRef());
    var list =
        new VerificationKeeper.ListOf(
            null, testKit.<VerificationKeeper.Listing>createTestProbe().getRef());
    for (Object message : List.of(start, get, list)) {
      assertEquals(message, testKit.serializationTestKit().verifySerialization(message, true));
    }
  }

  @Test
  void whatIsJournaledReadsBack() {
    Map<String, VerificationKeeper.Entry> entries = new TreeMap<>();
    entries.put(PLAN.id(), new VerificationKeeper.Entry(PLAN, VIEW.summary()));
    for (Object persisted :
        List.of(
            new VerificationKeeper.Requested(PLAN, AT),
            new VerificationKeeper.Concluded(VIEW.summary(), AT),
            new VerificationKeeper.AutoVerifyOn(AT),
            new VerificationKeeper.State(entries, AT),
            new Verification.Checkpointed(
                500, 500, new Tally(498, 1, 0, 0, 1, 0), List.of(MISSING, RESOLVED), AT),
            new Verification.Ended(VerificationView.Status.COMPLETED, null, AT),
            new Verification.State(
                500,
                500,
                Tally.NONE,
                List.of(MISSING),
                1,
                VerificationView.Status.RUNNING,
                null,
                null))) {
      assertEquals(persisted, roundTrip(persisted));
    }
  }
}

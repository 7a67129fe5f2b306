package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.provider.budget.BudgetView;
import io.fencekeeper.provider.budget.ProviderBudget;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.WireRoundTrip;
import io.fencekeeper.worker.WorkProtocol;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * What the budget keeper, the nodes' pools and the dispatchers tell each other crosses the wire,
 * and what the keeper journals replays; a run journaled before providers had names replays as a run
 * of the default provider.
 */
class BudgetMessagesSerializationTest {

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

  static Object roundTrip(Object message) {
    return WireRoundTrip.roundTrip(testKit.system(), message);
  }

  @Test
  void everyBudgetMessageAndEventSurvivesTheWire() throws Exception {
    var grants = testKit.<BudgetKeeper.Grant>createTestProbe().ref();
    var shares = testKit.<BudgetKeeper.Share>createTestProbe().ref();
    Instant at = Instant.parse("2026-11-30T02:00:00Z");
    BudgetView view =
        new BudgetView(
            "payments",
            8,
            40,
            "operator",
            4,
            20,
            false,
            4,
            3,
            List.of(new BudgetView.Node("pekko://fencekeeper@10.0.0.1:25520", 4, 20, 4, 3, 5, 900)),
            List.of(new BudgetView.Run("tonight/2026-11-29", 16, true, 3)),
            new BudgetView.Throttling(2, 7, null, 250),
            List.of(new BudgetView.Change(at, 4, 20, "2 throttled answers")));
    List<Object> messages =
        List.of(
            new BudgetKeeper.Renew("payments", "node", 3, 42, 7, 4, 20, 3, 5, 40, 1, 250, grants),
            new BudgetKeeper.Grant("payments", true, 4, -1, Duration.ofSeconds(30), 3, 42, 8),
            new BudgetKeeper.ReportRun("payments", "tonight/2026-11-29", 16, true, shares),
            new BudgetKeeper.Share("payments", "tonight/2026-11-29", true, 3, 4),
            new BudgetKeeper.LeaveRun("payments", "tonight/2026-11-29"),
            new BudgetKeeper.Budgets(List.of(view)),
            new BudgetKeeper.BudgetSet(view),
            new BudgetKeeper.UnknownProvider("nobody", List.of("default", "payments")),
            new BudgetKeeper.BudgetChanged("payments", new ProviderBudget(8, 40), at),
            new BudgetKeeper.State(Map.of("payments", new ProviderBudget(8, 40))),
            new WorkProtocol.WorkOffer(
                7,
                ItemId.of("tonight", LocalDate.parse("2026-11-29"), "a-1", "c-1"),
                5,
                Duration.ofSeconds(30),
                "payments"));
    for (Object message : messages) {
      // with the transport information an ActorRef needs, as remoting has it
      testKit.serializationTestKit().verifySerialization(message, true);
    }
  }

  @Test
  void aRunJournaledBeforeProvidersHadNamesCallsTheDefaultProvider() throws Exception {
    RunRequest current =
        new RunRequest(
            "tonight",
            LocalDate.parse("2026-11-29"),
            new Scope.Inline(List.of(new AccountCursor("a-1", "c-1"))),
            Instant.parse("2026-11-30T05:00:00Z"),
            5,
            0,
            "payments");
    assertEquals(current, roundTrip(current));
    Serialization serialization = SerializationExtension.get(testKit.system());
    var serializer = serialization.findSerializerFor(current);
    Map<String, Object> older = new LinkedHashMap<>();
    older.put("job", "tonight");
    older.put("businessDate", "2026-11-29");
    older.put("scope", Map.of("type", "csv", "path", "accounts.csv"));
    older.put("deadline", "2026-11-30T05:00:00Z");
    older.put("maxAttempts", 5);
    older.put("maxFailedItems", 0);
    byte[] bytes = new ObjectMapper(new CBORFactory()).writeValueAsBytes(older);
    RunRequest replayed =
        (RunRequest)
            serialization
                .deserialize(
                    bytes, serializer.identifier(), Serializers.manifestFor(serializer, current))
                .get();
    assertNull(replayed.provider());
    assertEquals(ProviderName.DEFAULT, replayed.providerName());
    assertEquals(List.of(), replayed.differencesFrom(replayed), "compares like itself");
  }
}

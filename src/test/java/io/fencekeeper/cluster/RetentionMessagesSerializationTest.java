package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import io.fencekeeper.archive.PruneDecision;
import io.fencekeeper.archive.RetentionKeeper;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.RunArchive;
import io.fencekeeper.run.RunCoordinator;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * What retention sends between nodes (an operator's prune to the keeper, the keeper's questions to
 * the coordinator) crosses the wire, what the coordinator journals of it replays, and a snapshot
 * taken before retention existed replays with nothing claimed.
 */
class RetentionMessagesSerializationTest {

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
  void everyRetentionMessageAndEventSurvivesTheWire() {
    Instant at = Instant.parse("2027-03-01T12:00:00Z");
    String runId = "nightly/2026-11-29";
    List<Object> messages =
        List.of(
            new RunCoordinator.BeginPruning(
                runId, testKit.<RunCoordinator.PruningReply>createTestProbe().ref()),
            new RunCoordinator.EndPruning(
                runId, testKit.<RunCoordinator.PruningReply>createTestProbe().ref()),
            new RunCoordinator.GetPruning(
                testKit.<RunCoordinator.PruningClaims>createTestProbe().ref()),
            new RunCoordinator.PruningAllowed(runId),
            new RunCoordinator.PruningRefused(runId, "the coordinator holds the run"),
            new RunCoordinator.PruningClaims(Set.of(runId)),
            new RunCoordinator.PruningBegun(runId, at),
            new RunCoordinator.PruningEnded(runId, at),
            new RetentionKeeper.Prune(
                at, true, testKit.<RetentionKeeper.PruneAnswer>createTestProbe().ref()),
            new RetentionKeeper.PrunePlanned(
                at,
                false,
                true,
                List.of(
                    new PruneDecision(
                        runId, "PARTIAL", at, PruneDecision.Action.ARCHIVE, "ended before"),
                    new PruneDecision(runId, null, null, PruneDecision.Action.FINISH, "begun")),
                2),
            new RetentionKeeper.PruneRefused("retention_busy", "a pass is running"),
            new RunArchive(
                "nightly__2026-11-29.jsonl.gz", "ab".repeat(32), 1024, 3, 9, "node", at, at, 12));
    for (Object message : messages) {
      testKit.serializationTestKit().verifySerialization(message, true);
    }
  }

  @Test
  void aCoordinatorSnapshotFromBeforeRetentionReplaysWithNothingClaimed() throws Exception {
    RunCoordinator.State now =
        new RunCoordinator.State(new TreeMap<>(), null, Map.of(), 7, Set.of());
    Serialization serialization = SerializationExtension.get(testKit.system());
    var serializer = serialization.findSerializerFor(now);
    Map<String, Object> older = new LinkedHashMap<>();
    older.put("runs", Map.of());
    older.put("governor", null);
    older.put("signals", Map.of());
    older.put("signalOffset", 7);
    byte[] bytes = new ObjectMapper(new CBORFactory()).writeValueAsBytes(older);
    RunCoordinator.State replayed =
        (RunCoordinator.State)
            serialization
                .deserialize(
                    bytes, serializer.identifier(), Serializers.manifestFor(serializer, now))
                .get();
    assertEquals(Set.of(), replayed.pruning());
    assertEquals(now, replayed);
  }
}

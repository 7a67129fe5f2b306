package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import io.fencekeeper.node.FencekeeperNode;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Journals written before the worker's last step became one event hold an {@code EffectRecorded}
 * (without {@code reconciled}) and an {@code ItemCompleted} (without an outcome): the bytes such a
 * journal holds still replay to a DONE item with its effect.
 */
class OlderJournalEventsTest {

  static final ActorTestKit testKit =
      ActorTestKit.create(FencekeeperNode.config(Map.of("pekko.actor.provider", "local")));

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** The bytes the serializer wrote for an event with the fields it had then. */
  static Object replay(Class<?> type, Map<String, Object> oldFields) throws Exception {
    Serialization serialization = SerializationExtension.get(testKit.system());
    Object current = sample(type);
    var serializer = serialization.findSerializerFor(current);
    String manifest = Serializers.manifestFor(serializer, current);
    byte[] oldBytes =
        new ObjectMapper(new CBORFactory()).findAndRegisterModules().writeValueAsBytes(oldFields);
    return serialization.deserialize(oldBytes, serializer.identifier(), manifest).get();
  }

  static Object sample(Class<?> type) {
    Instant at = Instant.parse("2026-11-29T01:00:00Z");
    return type == WorkItem.ItemCompleted.class
        ? new WorkItem.ItemCompleted(1, null, false, 0, at)
        : new WorkItem.EffectRecorded(1, null, false, at);
  }

  @Test
  void theOlderEffectRecordedAndItemCompletedReplayToADoneItemWithItsEffect() throws Exception {
    Map<String, Object> outcome = new LinkedHashMap<>();
    outcome.put("kind", "APPLIED");
    outcome.put("providerReference", "eff-7");
    outcome.put("detail", "voided");
    Map<String, Object> recorded = new LinkedHashMap<>();
    recorded.put("token", 1);
    recorded.put("outcome", outcome);
    recorded.put("at", "2026-11-29T01:00:01Z");
    Map<String, Object> completed = new LinkedHashMap<>();
    completed.put("token", 1);
    completed.put("at", "2026-11-29T01:00:01Z");

    WorkItem.EffectRecorded effect =
        (WorkItem.EffectRecorded) replay(WorkItem.EffectRecorded.class, recorded);
    WorkItem.ItemCompleted done =
        (WorkItem.ItemCompleted) replay(WorkItem.ItemCompleted.class, completed);
    assertNull(done.outcome(), "an older completion carries no effect of its own");

    WorkItem.State state =
        WorkItem.State.initial()
            .onLeaseGranted(
                new WorkItem.LeaseGranted(
                    "w-1",
                    1,
                    1,
                    5,
                    Instant.parse("2026-11-29T01:00:30Z"),
                    null,
                    Instant.parse("2026-11-29T01:00:00Z")))
            .onEffectRecorded(effect)
            .onCompleted(done);
    assertEquals(WorkItem.Status.DONE, state.status());
    assertEquals(WorkItem.EffectStatus.RECORDED, state.effect());
    assertEquals("eff-7", state.effectOutcome().providerReference());
  }
}

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
    if (type == WorkItem.LeaseGranted.class) {
      return new WorkItem.LeaseGranted("w-1", 1, 1, 5, at, null, 7, at);
    }
    if (type == WorkItem.LeaseReleased.class) {
      return new WorkItem.LeaseReleased(1, at);
    }
    return type == WorkItem.ItemCompleted.class
        ? new WorkItem.ItemCompleted(1, null, false, 0, at)
        : new WorkItem.EffectRecorded(1, null, false, at);
  }

  /**
   * A claim journaled before claims named their holder's node: its holder's node is not known (0),
   * so a silent end of its lease counts as a loss, as it did when it was written.
   */
  @Test
  void anOlderLeaseGrantedReplaysWithItsHoldersNodeUnknown() throws Exception {
    Map<String, Object> granted = new LinkedHashMap<>();
    granted.put("workerId", "pekko://fencekeeper@10.0.0.7:25520/w3");
    granted.put("token", 4);
    granted.put("attempt", 4);
    granted.put("maxAttempts", 5);
    granted.put("leaseExpiresAt", "2026-11-29T01:00:30Z");
    granted.put("previousOwner", "pekko://fencekeeper@10.0.0.8:25520/w1");
    granted.put("at", "2026-11-29T01:00:00Z");

    WorkItem.LeaseGranted old =
        (WorkItem.LeaseGranted) replay(WorkItem.LeaseGranted.class, granted);

    assertEquals(0, old.holderIncarnation());
    assertNull(old.requestId(), "claims had no request id then: none can be repeated");
    assertEquals("pekko://fencekeeper@10.0.0.8:25520/w1", old.previousOwner());
    WorkItem.State state = WorkItem.State.initial().onLeaseGranted(old);
    assertEquals(0, state.ownerIncarnation());
    assertEquals(WorkItem.Status.LEASED, state.status());
    assertEquals(4, state.token());
  }

  /**
   * A release journaled before releases could be unused (a claim abandoned unanswered) broke the
   * run of losses, as every release did then: it still does on replay.
   */
  @Test
  void anOlderLeaseReleasedReplaysAsAReleaseThatBreaksTheRunOfLosses() throws Exception {
    Map<String, Object> released = new LinkedHashMap<>();
    released.put("token", 2);
    released.put("at", "2026-11-29T01:01:00Z");
    WorkItem.LeaseReleased old =
        (WorkItem.LeaseReleased) replay(WorkItem.LeaseReleased.class, released);
    assertEquals(false, old.unused());
    Instant at = Instant.parse("2026-11-29T01:00:00Z");
    WorkItem.State state =
        WorkItem.State.initial()
            .onLeaseGranted(new WorkItem.LeaseGranted("a/w1", 1, 1, 5, at, null, 0, at))
            .onLeaseGranted(new WorkItem.LeaseGranted("b/w1", 2, 2, 5, at, null, 0, at));
    assertEquals(1, state.budget().consecutiveLosses());
    assertEquals(0, StateChange.released(state, old).budget().consecutiveLosses());
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
                    0,
                    Instant.parse("2026-11-29T01:00:00Z")))
            .onEffectRecorded(effect)
            .onCompleted(done);
    assertEquals(WorkItem.Status.DONE, state.status());
    assertEquals(WorkItem.EffectStatus.RECORDED, state.effect());
    assertEquals("eff-7", state.effectOutcome().providerReference());
  }
}

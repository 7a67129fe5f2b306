package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.node.FencekeeperNode;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * An item's snapshot holds its {@code State} by the fields, not by the classes of its parts: a
 * snapshot written while {@link AttemptBudget} and its {@code SilentEnd} were still nested in
 * {@code WorkItem} (the bytes below, taken from that code's serializer) reads back as the same
 * state, and the state written today is the same bytes.
 */
class StateSnapshotTest {

  static final ActorTestKit testKit =
      ActorTestKit.create(FencekeeperNode.config(Map.of("pekko.actor.provider", "local")));

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /**
   * Written by commit 11c7a22's serializer (manifest {@code io.fencekeeper.item.WorkItem$State}).
   */
  static final String WRITTEN_BEFORE_THE_SPLIT =
      "v2ZzdGF0dXNmTEVBU0VEZW93bmVyeCVwZWtrbzovL2ZlbmNla2VlcGVyQDEwLjAuMC45OjI1NTIwL3cyZXRva2Vu"
          + "B25sZWFzZUV4cGlyZXNBdHQyMDI2LTExLTI5VDAxOjAwOjMwWmdhdHRlbXB0B2ttYXhBdHRlbXB0cxRmZWZmZWN0"
          + "aUFNQklHVU9VU21lZmZlY3RPdXRjb21lv2RraW5kZ0FQUExJRURxcHJvdmlkZXJSZWZlcmVuY2VlcmVmLTFmZGV0"
          + "YWlsZmRldGFpbP9vb3V0Y29tZVJlcG9ydGVk9GlsYXN0RXJyb3JycHJvdmlkZXIgdGltZWQgb3V0bGNsb3NlZFJl"
          + "YXNvbvZncmV0cnlBdHQyMDI2LTExLTI5VDAxOjAwOjA1WmZidWRnZXS/bHN0YXJ0ZWRBZnRlcgJrbG9zdEhvbGRl"
          + "cnOBeCVwZWtrbzovL2ZlbmNla2VlcGVyQDEwLjAuMC43OjI1NTIwL3czcWNvbnNlY3V0aXZlTG9zc2VzAWlzaWxl"
          + "bnRSdW6Cv2Zob2xkZXJ4JXBla2tvOi8vZmVuY2VrZWVwZXJAMTAuMC4wLjg6MjU1MjAvdzFldG9rZW4FZWhlYXJk"
          + "9f+/ZmhvbGRlcnglcGVra286Ly9mZW5jZWtlZXBlckAxMC4wLjAuNzoyNTUyMC93M2V0b2tlbgZlaGVhcmT0/2lo"
          + "ZWFyZExhdGUG/3Bvd25lckluY2FybmF0aW9uORCR/w==";

  static WorkItem.State sample() {
    Instant at = Instant.parse("2026-11-29T01:00:00Z");
    AttemptBudget budget =
        new AttemptBudget(
            2,
            List.of("pekko://fencekeeper@10.0.0.7:25520/w3"),
            1,
            List.of(
                new AttemptBudget.SilentEnd("pekko://fencekeeper@10.0.0.8:25520/w1", 5, true),
                new AttemptBudget.SilentEnd("pekko://fencekeeper@10.0.0.7:25520/w3", 6, false)),
            6);
    return new WorkItem.State(
        WorkItem.Status.LEASED,
        "pekko://fencekeeper@10.0.0.9:25520/w2",
        7,
        at.plusSeconds(30),
        7,
        20,
        WorkItem.EffectStatus.AMBIGUOUS,
        new WorkItem.EffectOutcome(WorkItem.OutcomeKind.APPLIED, "ref-1", "detail"),
        false,
        "provider timed out",
        null,
        at.plusSeconds(5),
        budget,
        -4242L,
        null);
  }

  @Test
  void aSnapshotWrittenBeforeTheBudgetMovedReadsBackTheSame() throws Exception {
    Serialization serialization = SerializationExtension.get(testKit.system());
    WorkItem.State state = sample();
    var serializer = serialization.findSerializerFor(state);
    assertEquals(
        "io.fencekeeper.item.WorkItem$State",
        Serializers.manifestFor(serializer, state),
        "the manifest a snapshot row carries");
    byte[] old = Base64.getDecoder().decode(WRITTEN_BEFORE_THE_SPLIT);

    Object read =
        serialization
            .deserialize(old, serializer.identifier(), "io.fencekeeper.item.WorkItem$State")
            .get();

    assertEquals(state, read);
    assertEquals(
        WRITTEN_BEFORE_THE_SPLIT,
        Base64.getEncoder().encodeToString(serialization.serialize(state).get()),
        "today's bytes for the same state");
  }

  /** A lookup bound is written when there is one, and read back as it was. */
  @Test
  void aStateWithALookupBoundReadsBackTheSame() {
    Serialization serialization = SerializationExtension.get(testKit.system());
    WorkItem.State plain = sample();
    WorkItem.State bounded =
        new WorkItem.State(
            plain.status(),
            plain.owner(),
            plain.token(),
            plain.leaseExpiresAt(),
            plain.attempt(),
            plain.maxAttempts(),
            plain.effect(),
            plain.effectOutcome(),
            plain.outcomeReported(),
            plain.lastError(),
            plain.closedReason(),
            plain.retryAt(),
            plain.budget(),
            plain.ownerIncarnation(),
            Instant.parse("2026-11-29T01:00:30Z"));
    var serializer = serialization.findSerializerFor(bounded);

    Object read =
        serialization
            .deserialize(
                serialization.serialize(bounded).get(),
                serializer.identifier(),
                Serializers.manifestFor(serializer, bounded))
            .get();

    assertEquals(bounded, read);
  }
}

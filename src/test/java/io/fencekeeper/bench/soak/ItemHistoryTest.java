package io.fencekeeper.bench.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The soak's own fold of an item's journal: read from CBOR as the journal holds it, it counts what
 * docs/design.md says the run's counters count, and ends in the status the entity's own fold
 * ({@link WorkItem#replay}) gives.
 */
class ItemHistoryTest {

  private static final ObjectMapper CBOR =
      JsonMapper.builder(new CBORFactory()).addModule(new JavaTimeModule()).build();
  private static final Instant AT = Instant.parse("2026-12-06T20:00:00Z");
  private static final ItemId ITEM = ItemId.of("soak", LocalDate.of(2026, 1, 1), "a-1", "c");

  private static WorkItem.LeaseGranted granted(String worker, long token, String previous) {
    return new WorkItem.LeaseGranted(worker, token, (int) token, 5, AT, previous, 0, AT);
  }

  private static EffectOutcome applied() {
    return new EffectOutcome(OutcomeKind.APPLIED, "eff-1", "voided");
  }

  /** The events as the soak reads them back: class name and CBOR payload. */
  private static ItemHistory fold(List<WorkItem.Event> events) throws Exception {
    ItemHistory history = new ItemHistory();
    for (WorkItem.Event event : events) {
      history.add(event.getClass().getName(), CBOR.readTree(CBOR.writeValueAsBytes(event)));
    }
    return history;
  }

  @Test
  void aTakeoverThatReconciledCountsAsTheRunViewDoes() throws Exception {
    ItemHistory history =
        fold(
            List.of(
                granted("w-1", 1, null),
                new WorkItem.StaleCommandRejected("Renew", "w-1", 1, 2, "stale", AT),
                granted("w-2", 2, "w-1"),
                new WorkItem.ItemCompleted(2, applied(), true, 2, AT)));
    assertEquals(ItemHistory.Status.DONE, history.status);
    assertEquals("APPLIED", history.effectKind);
    assertEquals(2, history.claims);
    assertEquals(2, history.endedAttempts, "the taken-over attempt and the completed one");
    assertEquals(1, history.takeovers);
    assertEquals(1, history.staleRejections);
    assertEquals(1, history.reconciliations);
    assertEquals(2, history.throttledAnswers);
    assertTrue(history.effectsAgree(1));
    assertFalse(history.effectsAgree(0), "a DONE item without its effect");
    assertFalse(history.effectsAgree(2), "a duplicate");
  }

  @Test
  void aDoneItemWithNothingToDoHasNoEffectAndAnUnsettledOneAtMostOne() throws Exception {
    ItemHistory nothing =
        fold(
            List.of(
                granted("w-1", 1, null),
                new WorkItem.ItemCompleted(
                    1, new EffectOutcome(OutcomeKind.NOTHING_TO_DO, null, "clean"), false, 0, AT)));
    assertTrue(nothing.effectsAgree(0));
    assertFalse(nothing.effectsAgree(1));
    ItemHistory closed =
        fold(List.of(granted("w-1", 1, null), new WorkItem.ItemClosed(2, "deadline", "w-1", AT)));
    assertEquals(ItemHistory.Status.CLOSED, closed.status);
    assertEquals(1, closed.endedAttempts, "closed while leased");
    assertTrue(closed.effectsAgree(0));
    assertTrue(closed.effectsAgree(1), "its holder may have applied before the close");
    assertFalse(closed.effectsAgree(2));
  }

  @Test
  void itEndsInTheStatusTheEntitysOwnFoldGives() throws Exception {
    List<List<WorkItem.Event>> lives =
        List.of(
            List.of(),
            List.of(granted("w-1", 1, null)),
            List.of(granted("w-1", 1, null), new WorkItem.LeaseReleased(1, AT)),
            List.of(
                granted("w-1", 1, null),
                new WorkItem.AttemptFailed(1, "503", true, false, AT, 1, AT)),
            List.of(
                granted("w-1", 1, null),
                new WorkItem.AttemptFailed(1, "400", false, true, AT, 0, AT)),
            List.of(
                granted("w-1", 1, null),
                new WorkItem.ItemQuarantined(2, "lost", List.of("w-1"), "w-1", AT)),
            List.of(
                granted("w-1", 1, null),
                new WorkItem.ItemQuarantined(2, "lost", List.of("w-1"), "w-1", AT),
                new WorkItem.LateHolderHeard("w-1", 1, true, AT)),
            List.of(
                granted("w-1", 1, null),
                new WorkItem.AttemptsExhausted(2, "used up", List.of(), "w-1", AT)),
            List.of(
                new WorkItem.ItemClosed(1, "deadline", null, AT),
                new WorkItem.ItemReopened(WorkItem.Status.CLOSED, AT)),
            List.of(
                granted("w-1", 1, null),
                new WorkItem.EffectRecorded(1, applied(), false, AT),
                new WorkItem.ItemCompleted(1, null, false, 0, AT)));
    for (List<WorkItem.Event> life : lives) {
      ItemHistory history = fold(life);
      assertEquals(
          WorkItem.replay(ITEM, life).status().name(), history.status.name(), life.toString());
    }
    assertEquals("APPLIED", fold(lives.get(lives.size() - 1)).effectKind, "recorded, then DONE");
  }

  @Test
  void anIncarnationThatWritesAgainAfterAnotherIsASplitBrain() {
    ItemHistory handedOver = new ItemHistory();
    for (String writer : List.of("a", "a", "b", "b", "c")) {
      handedOver.writtenBy(writer);
    }
    assertNull(handedOver.interleaved);
    assertEquals(List.of("a", "b", "c"), handedOver.writers);
    ItemHistory split = new ItemHistory();
    for (String writer : List.of("a", "b", "a")) {
      split.writtenBy(writer);
    }
    assertNotNull(split.interleaved);
  }

  @Test
  void anEventIsNamedByItsClassWhateverItsVersion() {
    assertEquals(
        "LeaseGranted", ItemHistory.eventName("io.fencekeeper.item.WorkItem$LeaseGranted"));
    assertEquals("ItemClosed", ItemHistory.eventName("io.fencekeeper.item.WorkItem$ItemClosed#2"));
  }
}

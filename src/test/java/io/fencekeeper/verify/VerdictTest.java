package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.item.WorkItem.Status;
import io.fencekeeper.provider.Receipt;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The table of docs/design.md, "Verifying a run", row by row. */
class VerdictTest {

  static final Instant AT = Instant.parse("2026-11-30T01:02:03Z");
  static final Optional<Receipt> NOT_FOUND = Optional.empty();

  static ItemView item(Status status, EffectStatus effect, EffectOutcome outcome) {
    return new ItemView(
        "job/2026-11-29/a-1/c-1",
        status,
        null,
        3,
        null,
        1,
        5,
        effect,
        outcome,
        null,
        null,
        null,
        "fk-0123");
  }

  static Optional<Receipt> found(String effectId) {
    return Optional.of(new Receipt("fk-0123", effectId, Receipt.APPLIED, AT));
  }

  static EffectOutcome applied(String effectId) {
    return new EffectOutcome(OutcomeKind.APPLIED, effectId, "APPLIED");
  }

  static Outcome judge(ItemView item, Optional<Receipt> provider) {
    return Verdict.judge(7, item, provider).outcome();
  }

  @Test
  void doneWithAnEffectMustBeFoundWithTheSameEffectId() {
    ItemView done = item(Status.DONE, EffectStatus.RECORDED, applied("eff-1"));
    ItemView replayed =
        item(
            Status.DONE,
            EffectStatus.RECORDED,
            new EffectOutcome(OutcomeKind.FOUND_BY_LOOKUP, "eff-2", "APPLIED"));

    assertEquals(Outcome.AGREE, judge(done, found("eff-1")));
    assertEquals(Outcome.MISSING, judge(done, NOT_FOUND));
    assertEquals(Outcome.DIFFERENT, judge(done, found("eff-9")));
    assertEquals(Outcome.AGREE, judge(replayed, found("eff-2")));
    assertEquals(Outcome.MISSING, judge(replayed, NOT_FOUND));
  }

  @Test
  void doneWithNothingToDoMustHaveNothingUnderTheKey() {
    ItemView nothing =
        item(
            Status.DONE,
            EffectStatus.RECORDED,
            new EffectOutcome(OutcomeKind.NOTHING_TO_DO, null, "already reconciled"));

    assertEquals(Outcome.AGREE, judge(nothing, NOT_FOUND));
    assertEquals(Outcome.UNEXPECTED_EFFECT, judge(nothing, found("eff-3")));
  }

  @Test
  void failedClosedOrNeverClaimedWithoutAnEffectMustHaveNothingUnderTheKey() {
    for (Status status : new Status[] {Status.FAILED, Status.CLOSED, Status.PENDING}) {
      ItemView none = item(status, EffectStatus.NONE, null);
      assertEquals(Outcome.AGREE, judge(none, NOT_FOUND), status.name());
      assertEquals(Outcome.UNEXPECTED_EFFECT, judge(none, found("eff-4")), status.name());
    }
  }

  @Test
  void anAmbiguousEffectIsResolvedEitherWayAndTheAnswerKept() {
    ItemView ambiguous = item(Status.CLOSED, EffectStatus.AMBIGUOUS, null);

    Finding applied = Verdict.judge(7, ambiguous, found("eff-5"));
    Finding none = Verdict.judge(7, ambiguous, NOT_FOUND);

    assertEquals(Outcome.RESOLVED, applied.outcome());
    assertEquals("eff-5", applied.providerEffectId());
    assertEquals(AT, applied.providerAppliedAt());
    assertEquals(Outcome.RESOLVED, none.outcome());
    assertFalse(none.providerFound());
    assertFalse(Outcome.RESOLVED.discrepancy(), "either answer is a fact, not a discrepancy");
  }

  @Test
  void aFindingNamesBothSides() {
    Finding finding =
        Verdict.judge(
            42, item(Status.DONE, EffectStatus.RECORDED, applied("eff-1")), found("eff-9"));

    assertEquals(42, finding.seq());
    assertEquals("job/2026-11-29/a-1/c-1", finding.itemId());
    assertEquals("fk-0123", finding.idempotencyKey());
    assertEquals("DONE", finding.journalStatus());
    assertEquals("RECORDED", finding.journalEffect());
    assertEquals("APPLIED", finding.journalOutcome());
    assertEquals("eff-1", finding.journalEffectId());
    assertEquals("eff-9", finding.providerEffectId());
    assertTrue(finding.outcome().discrepancy());
    assertNull(
        Verdict.judge(1, item(Status.FAILED, EffectStatus.NONE, null), NOT_FOUND).journalOutcome());
  }

  @Test
  void tallyCountsEachOutcomeAndWhatIsADiscrepancy() {
    Tally tally = Tally.NONE;
    ItemView done = item(Status.DONE, EffectStatus.RECORDED, applied("eff-1"));
    ItemView ambiguous = item(Status.CLOSED, EffectStatus.AMBIGUOUS, null);
    tally = tally.plus(Verdict.judge(1, done, found("eff-1")));
    tally = tally.plus(Verdict.judge(2, done, NOT_FOUND));
    tally = tally.plus(Verdict.judge(3, done, found("x")));
    tally = tally.plus(Verdict.judge(4, item(Status.FAILED, EffectStatus.NONE, null), found("y")));
    tally = tally.plus(Verdict.judge(5, ambiguous, found("z")));
    tally = tally.plus(Verdict.judge(6, ambiguous, NOT_FOUND));

    assertEquals(new Tally(1, 1, 1, 1, 1, 1), tally);
    assertEquals(3, tally.discrepancies());
    assertEquals(2, tally.resolved());
    assertEquals(6, tally.checked());
  }
}

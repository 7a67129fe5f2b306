package io.fencekeeper.verify;

import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.provider.Receipt;
import java.util.Objects;
import java.util.Optional;

/**
 * The rule of docs/design.md, "Verifying a run": an item's journal against the provider's answer
 * for its idempotency key. The effect record decides, whatever the item's status: a recorded effect
 * with the provider's effect id must be there with that id; a recorded "nothing to do", or no
 * effect at all (FAILED, CLOSED, never claimed), must have nothing under the key; an AMBIGUOUS
 * effect is settled by whatever the provider answers.
 */
public final class Verdict {

  private Verdict() {}

  /** {@code provider}: the effect under the item's key, empty for a 404. */
  public static Finding judge(long seq, ItemView journal, Optional<Receipt> provider) {
    EffectOutcome recorded = journal.effectOutcome();
    Outcome outcome = outcome(journal.effect(), recorded, provider);
    return new Finding(
        seq,
        journal.itemId(),
        journal.idempotencyKey(),
        outcome,
        journal.status().name(),
        journal.effect().name(),
        recorded == null ? null : recorded.kind().name(),
        recorded == null ? null : recorded.providerReference(),
        provider.map(Receipt::effectId).orElse(null),
        provider.map(Receipt::appliedAt).orElse(null));
  }

  static Outcome outcome(EffectStatus effect, EffectOutcome recorded, Optional<Receipt> provider) {
    if (effect == EffectStatus.AMBIGUOUS) {
      return Outcome.RESOLVED;
    }
    boolean expectsEffect =
        effect == EffectStatus.RECORDED
            && (recorded == null || recorded.kind() != OutcomeKind.NOTHING_TO_DO);
    if (!expectsEffect) {
      return provider.isPresent() ? Outcome.UNEXPECTED_EFFECT : Outcome.AGREE;
    }
    if (provider.isEmpty()) {
      return Outcome.MISSING;
    }
    String expected = recorded == null ? null : recorded.providerReference();
    // a record without the provider's id (written before ids were kept) agrees with any effect
    return expected == null || Objects.equals(expected, provider.get().effectId())
        ? Outcome.AGREE
        : Outcome.DIFFERENT;
  }
}

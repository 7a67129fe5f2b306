package io.fencekeeper.verify;

import io.fencekeeper.CborSerializable;
import java.time.Instant;

/**
 * One item whose check was not a plain agreement (a discrepancy, or an ambiguous effect resolved),
 * with both sides: what the journal says and what the provider answered.
 *
 * @param seq the item's place in the run's scope
 * @param journalStatus the item's status (DONE, FAILED, CLOSED, ...)
 * @param journalEffect the effect record: NONE, RECORDED or AMBIGUOUS
 * @param journalOutcome how a recorded effect came about (APPLIED, FOUND_BY_LOOKUP, NOTHING_TO_DO),
 *     else null
 * @param journalEffectId the provider's effect id the journal recorded, else null
 * @param providerEffectId the effect id the provider answered, null when it answered 404
 * @param providerAppliedAt when the provider says that effect was applied, else null
 */
public record Finding(
    long seq,
    String itemId,
    String idempotencyKey,
    Outcome outcome,
    String journalStatus,
    String journalEffect,
    String journalOutcome,
    String journalEffectId,
    String providerEffectId,
    Instant providerAppliedAt)
    implements CborSerializable {

  /** Whether the provider has an effect under the key. */
  public boolean providerFound() {
    return providerEffectId != null;
  }
}

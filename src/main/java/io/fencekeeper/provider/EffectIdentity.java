package io.fencekeeper.provider;

import java.util.Objects;

/**
 * The fields that define an effect (docs/provider-protocol.md, "The effect's identity"): a repeated
 * idempotency key whose cleanup has the same identity as the stored one is a replay; a different
 * identity is {@code 422 key_reused}. Every other field of the body (job, businessDate, accountId,
 * cursor, description, anything unknown) is not part of it.
 *
 * <p>{@code currency} is compared only when both sides carry one: a cleanup from a 1.0 client, or
 * an effect stored under a 1.0 body, has none, and must still replay.
 */
public record EffectIdentity(String itemId, String action, long amountMinor, String currency) {

  public static EffectIdentity of(Cleanup cleanup) {
    return new EffectIdentity(
        cleanup.item().value(),
        cleanup.plan().action(),
        cleanup.plan().amountMinor(),
        cleanup.plan().currency());
  }

  /** Whether {@code other} is the same effect: a repeat of it replays instead of applying. */
  public boolean sameEffect(EffectIdentity other) {
    return Objects.equals(itemId, other.itemId)
        && Objects.equals(action, other.action)
        && amountMinor == other.amountMinor
        && (currency == null || other.currency == null || currency.equals(other.currency));
  }

  /** What differs from {@code stored}, for the {@code key_reused} message: names, never values. */
  public String differenceFrom(EffectIdentity stored) {
    StringBuilder fields = new StringBuilder();
    if (!Objects.equals(itemId, stored.itemId)) {
      fields.append("itemId");
    }
    if (!Objects.equals(action, stored.action)) {
      fields.append(fields.isEmpty() ? "" : ", ").append("action");
    }
    if (amountMinor != stored.amountMinor) {
      fields.append(fields.isEmpty() ? "" : ", ").append("amountMinor");
    }
    if (currency != null && stored.currency != null && !currency.equals(stored.currency)) {
      fields.append(fields.isEmpty() ? "" : ", ").append("currency");
    }
    return fields.toString();
  }
}

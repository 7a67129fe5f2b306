package io.fencekeeper.sdk.provider;

import java.time.Instant;
import java.util.Objects;

/**
 * One cleanup to apply: the item, the plan the provider gave for it, the item's idempotency key,
 * the claim's fencing token and the deadline.
 *
 * @param item the item the cleanup is for
 * @param plan what {@link CleanupProvider#plan} answered for the item (never nothing-to-do)
 * @param idempotencyKey derived from the item only ({@code fk-} and 32 hex digits, at most 255
 *     characters), never from the attempt: every retry, resume and node sends the same key for the
 *     same cleanup. The effect's identity under the key is {@code item.value()}, {@code
 *     plan.action()}, {@code plan.amountMinor()} and {@code plan.currency()} (the currency compared
 *     only when both carry one); the description and anything else are not part of it
 * @param fencingToken the caller's current claim token for the item; it grows on every claim, so
 *     a lower token than one already seen under the key comes from a caller that lost its lease
 * @param deadline the instant at and after which the effect must not be committed, by the
 *     provider's clock. Fencekeeper looks the key up only once the deadline of every cleanup sent
 *     under it (plus a clock-skew allowance) has passed, so a lookup that finds nothing then is
 *     final
 */
public record Cleanup(
    Item item, Plan plan, String idempotencyKey, long fencingToken, Instant deadline) {

  public Cleanup {
    Objects.requireNonNull(item, "item");
    Objects.requireNonNull(plan, "plan");
    Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    Objects.requireNonNull(deadline, "deadline");
  }

  /** Whether {@code other} has the same effect identity: a repeat of it under the key replays. */
  public boolean sameEffect(Cleanup other) {
    return item.value().equals(other.item.value())
        && plan.action().equals(other.plan.action())
        && plan.amountMinor() == other.plan.amountMinor()
        && (plan.currency() == null
            || other.plan.currency() == null
            || plan.currency().equals(other.plan.currency()));
  }
}

package io.fencekeeper.provider;

import io.fencekeeper.item.ItemId;
import java.time.Instant;
import java.util.Objects;

/**
 * One cleanup to apply (docs/provider-protocol.md, "POST /v1/cleanups"): the item, the plan the
 * provider gave for it, the item's idempotency key (derived from the item, never from the attempt),
 * the claim's fencing token, and the deadline.
 *
 * <p>{@code deadline}: the provider must not commit the effect at or after this instant by its own
 * clock; one that cannot commit before it commits nothing. The caller looks the key up only once
 * the deadline (plus its clock-skew allowance) has passed, so a lookup that finds nothing then is
 * final, even at a provider without idempotency keys.
 */
public record Cleanup(
    ItemId item, Plan plan, String idempotencyKey, long fencingToken, Instant deadline) {

  public Cleanup {
    Objects.requireNonNull(item, "item");
    Objects.requireNonNull(plan, "plan");
    Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    Objects.requireNonNull(deadline, "deadline");
  }
}

package io.fencekeeper.provider;

import io.fencekeeper.CborSerializable;
import java.time.Instant;

/**
 * The provider's receipt for an effect. {@code status} is {@link #APPLIED} for the request that
 * applied it and {@link #REPLAYED} when a repeated key returned the first result without applying
 * anything; {@code effectId} and {@code appliedAt} are those of the one real application either
 * way.
 */
public record Receipt(String idempotencyKey, String effectId, String status, Instant appliedAt)
    implements CborSerializable {

  public static final String APPLIED = "APPLIED";
  public static final String REPLAYED = "REPLAYED";

  public Receipt asReplay() {
    return new Receipt(idempotencyKey, effectId, REPLAYED, appliedAt);
  }
}

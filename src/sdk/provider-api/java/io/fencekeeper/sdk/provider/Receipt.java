package io.fencekeeper.sdk.provider;

import java.time.Instant;
import java.util.Objects;

/**
 * The provider's receipt for the one effect under a key.
 *
 * @param effectId the provider's id of the effect, 1-255 characters: the same for the request that
 *     applied it and for every replay and lookup of it
 * @param appliedAt when the effect was committed
 * @param replayed true when this request applied nothing because the key's effect already existed
 *     (a repeat); false for the request that applied it. Ignored in a lookup's answer
 */
public record Receipt(String effectId, Instant appliedAt, boolean replayed) {

  public Receipt {
    if (effectId == null || effectId.isEmpty() || effectId.length() > 255) {
      throw new IllegalArgumentException("a receipt's effectId must be 1-255 characters");
    }
    Objects.requireNonNull(appliedAt, "appliedAt");
  }

  /** The receipt of the request that applied the effect. */
  public static Receipt applied(String effectId, Instant appliedAt) {
    return new Receipt(effectId, appliedAt, false);
  }

  /** The receipt of a repeat: the first effect's id and instant, nothing applied now. */
  public static Receipt replayed(String effectId, Instant appliedAt) {
    return new Receipt(effectId, appliedAt, true);
  }
}

package io.fencekeeper.item;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Instant;

/** An item as the outside world sees it: the API, the dispatcher and the tests. */
public record ItemView(
    String itemId,
    Status status,
    String owner,
    long token,
    Instant leaseExpiresAt,
    int attempt,
    int maxAttempts,
    EffectStatus effect,
    EffectOutcome effectOutcome,
    String lastError,
    String closedReason,
    Instant retryAt,
    String idempotencyKey)
    implements CborSerializable {

  static ItemView of(String itemId, String idempotencyKey, WorkItem.State s) {
    return new ItemView(
        itemId,
        s.status(),
        s.owner(),
        s.token(),
        s.leaseExpiresAt(),
        s.attempt(),
        s.maxAttempts(),
        s.effect(),
        s.effectOutcome(),
        s.lastError(),
        s.closedReason(),
        s.retryAt(),
        idempotencyKey);
  }
}

package io.fencekeeper.worker;

import io.fencekeeper.CborSerializable;
import java.time.Instant;

/** How one attempt at an item ended, as the dispatcher needs to know it. */
public sealed interface AttemptResult extends CborSerializable
    permits AttemptResult.Done,
        AttemptResult.Failed,
        AttemptResult.RetryAt,
        AttemptResult.Held,
        AttemptResult.Lost,
        AttemptResult.Closed,
        AttemptResult.Abandoned {

  /**
   * The item is DONE. {@code afterTakeover}: this attempt took over an expired lease; {@code
   * reconciled}: it had to look the effect up at the provider first.
   */
  record Done(boolean afterTakeover, boolean reconciled) implements AttemptResult {}

  /** The item is FAILED: permanent error or attempts used up. */
  record Failed(String error) implements AttemptResult {}

  /** The item is PENDING again and may be claimed from {@code at}. */
  record RetryAt(Instant at) implements AttemptResult {}

  /** Someone else holds a live lease until {@code until}. */
  record Held(Instant until) implements AttemptResult {}

  /** This attempt lost its lease (stale token): a newer holder owns the item. */
  record Lost(String reason) implements AttemptResult {}

  /** The item was closed by the coordinator (deadline or cancel). */
  record Closed() implements AttemptResult {}

  /** No answer from the item (timeout, journal failure): nothing is known, wait for the lease. */
  record Abandoned(String reason) implements AttemptResult {}
}

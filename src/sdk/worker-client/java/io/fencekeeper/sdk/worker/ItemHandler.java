package io.fencekeeper.sdk.worker;

import java.util.Optional;

/**
 * A team's cleanup, given to {@link FencekeeperWorker}: {@code apply} does it for one item under
 * its lease, {@code lookup} tells whether it was done already. Both carry what the target must
 * check (docs/external-workers.md, "The target's side"): the item's idempotency key (one effect per
 * key: a repeat must find the first, never apply twice) and the lease's fencing token (a target
 * refuses a token lower than the highest it has seen for the item).
 */
public interface ItemHandler {

  /**
   * Applies the item's cleanup at the target, with {@code item.idempotencyKey()} and {@code
   * lease.fencingToken()}. Called only while the lease has time left for it; check {@link
   * Lease#ensureLive} before each write of a long one. An exception means "not known whether it
   * was written": the client marks the effect ambiguous and hands the item back.
   */
  Outcome apply(Item item, Lease lease) throws Exception;

  /**
   * Whether the cleanup under {@code item.idempotencyKey()} is at the target already: {@link
   * Outcome.Found} if so, empty if not. Called before any {@code apply} of an item whose effect is
   * AMBIGUOUS (a lease that ended without an outcome, or a holder that did not know).
   */
  Optional<Outcome> lookup(Item item, Lease lease) throws Exception;
}

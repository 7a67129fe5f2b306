package io.fencekeeper.provider;

import io.fencekeeper.item.ItemId;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The boundary between Fencekeeper and the system that owns the effect (docs/design.md, "The
 * provider boundary").
 *
 * <p>Every method is asynchronous because workers are actors and must never block. A failure
 * completes the stage exceptionally with a {@link ProviderException}; {@link
 * ProviderError#from(Throwable)} turns whatever a stage failed with into a typed {@link
 * ProviderError}.
 */
public interface Provider extends AutoCloseable {

  /**
   * Read-only: what needs cleaning up for this item. Safe to call any number of times; the same
   * plan while the item's effect has not been applied and nothing else changed at the provider, and
   * it may change once the effect is applied (typically to nothing to do).
   */
  CompletionStage<Plan> plan(ItemId item);

  /**
   * The mutation: applies {@code cleanup} once. Its idempotency key is derived from the item, never
   * from the attempt, so a repeat is replayed rather than applied again by a provider that
   * deduplicates; its fencing token is the caller's current claim token, and a provider that fences
   * refuses a token lower than the highest it has seen for the key with {@link
   * ProviderError.StaleToken}; its deadline is the instant at and after which the provider must not
   * commit it (one that cannot commit before commits nothing and fails with {@link
   * ProviderError.Transient}).
   */
  CompletionStage<Receipt> apply(Cleanup cleanup);

  /**
   * Reconciles an ambiguous attempt: the effect recorded under this key, if there is one. Empty is
   * final only once the deadline of every cleanup sent under the key has passed (the caller waits
   * for that, docs/provider-protocol.md, "The deadline").
   */
  CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey);

  /** Releases connections, threads and any embedded server; never throws a checked exception. */
  @Override
  void close();
}

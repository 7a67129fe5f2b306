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

  /** Read-only: what needs cleaning up for this item. Safe to call any number of times. */
  CompletionStage<Plan> plan(ItemId item);

  /**
   * The mutation. {@code idempotencyKey} is derived from the item, never from the attempt, so a
   * repeat is replayed rather than applied again by a provider that deduplicates. {@code
   * fencingToken} is the caller's current claim token; a provider that fences refuses a token lower
   * than the highest it has seen with {@link ProviderError.StaleToken}.
   */
  CompletionStage<Receipt> apply(ItemId item, Plan plan, String idempotencyKey, long fencingToken);

  /** Reconciles an ambiguous attempt: the effect recorded under this key, if there is one. */
  CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey);

  /** Releases connections, threads and any embedded server; never throws a checked exception. */
  @Override
  void close();
}

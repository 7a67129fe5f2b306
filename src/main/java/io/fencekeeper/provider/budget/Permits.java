package io.fencekeeper.provider.budget;

import io.fencekeeper.provider.ProviderError;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What a worker needs of a provider's budget (docs/design.md, "Provider budgets"): a permit before
 * each provider call, given back after it with how the call ended, so that a throttled answer slows
 * every caller.
 */
public interface Permits {

  /**
   * A permit for one call, as soon as the budget allows; empty when none came within {@code
   * maxWait} (the caller decides whether to wait again).
   */
  CompletionStage<Optional<Permit>> acquire(Duration maxWait);

  /** One call's permit; {@link #release} gives it back exactly once. */
  interface Permit {
    /** {@code error} is how the call failed (a throttled answer counts), null when it did not. */
    void release(ProviderError error);
  }

  /** No budget: every call may go at once. */
  Permits UNLIMITED = maxWait -> CompletableFuture.completedFuture(Optional.of(error -> {}));
}

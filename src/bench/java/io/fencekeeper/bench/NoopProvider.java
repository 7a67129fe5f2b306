package io.fencekeeper.bench;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A provider that costs nothing: every plan says there is one action, every apply succeeds at once.
 * What remains of an item's time is Fencekeeper's own: claim, effect record, completion, journal.
 */
final class NoopProvider implements Provider {

  private static final Plan ONE_ACTION = Plan.action("noop", 0, "bench no-op");

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    return CompletableFuture.completedFuture(ONE_ACTION);
  }

  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    return CompletableFuture.completedFuture(
        new Receipt(
            cleanup.idempotencyKey(),
            "noop-" + cleanup.fencingToken(),
            Receipt.APPLIED,
            Instant.now()));
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
    return CompletableFuture.completedFuture(Optional.empty());
  }

  @Override
  public void close() {}
}

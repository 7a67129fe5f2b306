package io.fencekeeper.archive;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A provider in memory for the retention tests: it applies every account's cleanup once per
 * idempotency key, refuses accounts named {@code fail-*} for good (their items end FAILED, the run
 * PARTIAL) until {@link #holdFailing()}, after which their next apply waits until {@link
 * #release()}: a resumed run that stays RUNNING as long as the test wants.
 */
final class NightProvider implements Provider {

  private final Map<String, Receipt> applied = new ConcurrentHashMap<>();
  private volatile CompletableFuture<Void> gate;

  /** From now on a {@code fail-*} account's apply waits at a gate instead of failing. */
  void holdFailing() {
    gate = new CompletableFuture<>();
  }

  void release() {
    CompletableFuture<Void> open = gate;
    if (open != null) {
      open.complete(null);
    }
  }

  /** Effects applied, per idempotency key: one each, however often an item was attempted. */
  Map<String, Receipt> applied() {
    return applied;
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    return CompletableFuture.completedFuture(Plan.action("refund", 125, "EUR", "duplicate charge"));
  }

  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    ItemId item = cleanup.item();
    String key = cleanup.idempotencyKey();
    if (item.accountId().startsWith("fail-")) {
      CompletableFuture<Void> held = gate;
      if (held == null) {
        return CompletableFuture.failedFuture(
            new ProviderException(new ProviderError.Permanent("account closed at the provider")));
      }
      return held.thenApply(open -> record(key));
    }
    return CompletableFuture.completedFuture(record(key));
  }

  private Receipt record(String key) {
    return applied.computeIfAbsent(
        key, k -> new Receipt(k, "effect-" + k.substring(0, 12), "APPLIED", Instant.now()));
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String key) {
    return CompletableFuture.completedFuture(Optional.ofNullable(applied.get(key)));
  }

  @Override
  public void close() {
    release();
  }
}

package io.fencekeeper.worker;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * A provider that records every call (with the key and token an apply carried, and when it came)
 * and answers from a script: each call of an operation takes the next scripted answer, the last one
 * repeats. Unscripted, it plans a void, applies it and finds nothing by lookup.
 */
final class ScriptedProvider implements Provider {

  /**
   * One call: {@code key} and {@code token} are an apply's (a lookup has only the key), and so is
   * {@code deadline}.
   */
  record Call(
      String operation, ItemId item, String key, long token, Instant deadline, long atNanos) {}

  private final List<Call> calls = new CopyOnWriteArrayList<>();
  private final Deque<Supplier<CompletionStage<Plan>>> plans = new ArrayDeque<>();
  private final Deque<Supplier<CompletionStage<Receipt>>> applies = new ArrayDeque<>();
  private final Deque<Supplier<CompletionStage<Optional<Receipt>>>> lookups = new ArrayDeque<>();

  static Receipt receipt(ItemId item, String effectId) {
    return new Receipt(
        item.idempotencyKey(), effectId, Receipt.APPLIED, Instant.parse("2026-11-30T02:00:01Z"));
  }

  static <T> CompletionStage<T> failing(ProviderError error) {
    return CompletableFuture.failedFuture(new ProviderException(error));
  }

  synchronized ScriptedProvider plans(Supplier<CompletionStage<Plan>> answer) {
    plans.add(answer);
    return this;
  }

  synchronized ScriptedProvider applies(Supplier<CompletionStage<Receipt>> answer) {
    applies.add(answer);
    return this;
  }

  synchronized ScriptedProvider looksUp(Supplier<CompletionStage<Optional<Receipt>>> answer) {
    lookups.add(answer);
    return this;
  }

  List<Call> calls() {
    return List.copyOf(calls);
  }

  List<String> operations() {
    return calls.stream().map(Call::operation).toList();
  }

  private synchronized <T> Supplier<CompletionStage<T>> next(
      Deque<Supplier<CompletionStage<T>>> script, Supplier<CompletionStage<T>> unscripted) {
    if (script.isEmpty()) {
      return unscripted;
    }
    return script.size() == 1 ? script.peek() : script.poll();
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    calls.add(new Call("plan", item, null, 0, null, System.nanoTime()));
    return next(
            plans,
            () -> CompletableFuture.completedFuture(Plan.action("void", 1250, "a stale hold")))
        .get();
  }

  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    calls.add(
        new Call(
            "apply",
            cleanup.item(),
            cleanup.idempotencyKey(),
            cleanup.fencingToken(),
            cleanup.deadline(),
            System.nanoTime()));
    return next(applies, () -> CompletableFuture.completedFuture(receipt(cleanup.item(), "eff-1")))
        .get();
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
    calls.add(new Call("lookup", item, idempotencyKey, 0, null, System.nanoTime()));
    return next(lookups, () -> CompletableFuture.completedFuture(Optional.<Receipt>empty())).get();
  }

  @Override
  public void close() {}
}

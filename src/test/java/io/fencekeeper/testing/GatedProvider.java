package io.fencekeeper.testing;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.Receipt;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A provider that holds the first {@code apply} of chosen accounts at a gate, as a worker that
 * paused (GC, stalled VM) after its own lease check and before the send. The held call goes to the
 * real provider once the test opens the gate, with the token it was given.
 */
public final class GatedProvider implements Provider {

  private final Provider delegate;
  private final Map<String, CompletableFuture<Void>> gates = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> arrivals = new ConcurrentHashMap<>();
  private final Map<String, CompletableFuture<Void>> finished = new ConcurrentHashMap<>();

  public GatedProvider(Provider delegate) {
    this.delegate = delegate;
  }

  /** The next apply for this account waits until {@link #open}. */
  public void hold(String accountId) {
    gates.put(accountId, new CompletableFuture<>());
  }

  public void open(String accountId) {
    CompletableFuture<Void> gate = gates.get(accountId);
    if (gate != null) {
      gate.complete(null);
    }
  }

  /** How many applies for this account reached the gate. */
  public int arrived(String accountId) {
    AtomicInteger count = arrivals.get(accountId);
    return count == null ? 0 : count.get();
  }

  /** Whether the held apply of this account went out and came back (answer or error). */
  public boolean heldCallFinished(String accountId) {
    CompletableFuture<Void> done = finished.get(accountId);
    return done != null && done.isDone();
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    return delegate.plan(item);
  }

  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    ItemId item = cleanup.item();
    CompletableFuture<Void> gate = gates.get(item.accountId());
    if (gate == null || arrived(item.accountId()) > 0) {
      return delegate.apply(cleanup);
    }
    arrivals.computeIfAbsent(item.accountId(), a -> new AtomicInteger()).incrementAndGet();
    CompletableFuture<Void> done =
        finished.computeIfAbsent(item.accountId(), a -> new CompletableFuture<>());
    CompletableFuture<Receipt> sent =
        gate.thenCompose(open -> delegate.apply(cleanup)).toCompletableFuture();
    sent.whenComplete((outcome, failure) -> done.complete(null));
    return sent;
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String key) {
    return delegate.lookup(item, key);
  }

  @Override
  public void close() {
    gates.values().forEach(gate -> gate.complete(null));
    delegate.close();
  }
}

package io.fencekeeper.testing.plugins;

import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.ProviderContext;
import io.fencekeeper.sdk.provider.Receipt;
import java.util.Optional;

/**
 * A ledger whose calls break the contract as its settings say: {@code plan}, {@code apply} or
 * {@code lookup} = {@code null} (returns null), {@code throw} (an IllegalStateException), {@code
 * hang} (blocks until interrupted), {@code stuck} (blocks, deaf to interrupts, until {@link
 * #unstick} opens); {@code constructor} = {@code throw}. A hung call counts itself in {@link
 * #interrupted} when its thread is interrupted.
 */
public class MisbehavingPlugin extends LedgerPlugin {

  /** Hung calls whose thread was interrupted (the node abandoned them). */
  public static final java.util.concurrent.atomic.AtomicInteger interrupted =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Opened by a test to let every stuck call go. */
  public static final java.util.concurrent.CountDownLatch unstick =
      new java.util.concurrent.CountDownLatch(1);

  private final ProviderContext context;

  public MisbehavingPlugin(ProviderContext context) {
    this.context = context;
    if (context.setting("constructor", "").equals("throw")) {
      throw new IllegalStateException("cannot reach the ledger at ledger.internal:5432");
    }
  }

  @Override
  public Plan plan(Item item) {
    return misbehave("plan", () -> super.plan(item));
  }

  @Override
  public Receipt apply(Cleanup cleanup) {
    return misbehave("apply", () -> super.apply(cleanup));
  }

  @Override
  public Optional<Receipt> lookup(Item item, String idempotencyKey) {
    return misbehave("lookup", () -> super.lookup(item, idempotencyKey));
  }

  private <T> T misbehave(String method, java.util.function.Supplier<T> call) {
    switch (context.setting(method, "")) {
      case "null" -> {
        return null;
      }
      case "throw" -> throw new IllegalStateException(method + " failed inside the plugin");
      case "hang" -> {
        try {
          // hangs until the node gives up on the call and interrupts it
          new java.util.concurrent.CountDownLatch(1).await();
        } catch (InterruptedException e) {
          interrupted.incrementAndGet();
          Thread.currentThread().interrupt();
        }
        return null;
      }
      case "stuck" -> {
        while (true) {
          try {
            unstick.await();
            return null;
          } catch (InterruptedException deaf) {
            interrupted.incrementAndGet(); // a driver that ignores interrupts: it waits on
          }
        }
      }
      default -> {
        return call.get();
      }
    }
  }
}

package io.fencekeeper.sdk.provider.check;

import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.ProviderFailure;
import io.fencekeeper.sdk.provider.Receipt;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A {@link CleanupProvider} in this process, called as the node calls it: on threads of its own,
 * each call within the patience (its request timeout). A call that breaks the contract (returns
 * null, throws outside {@link ProviderFailure} from {@code plan} or {@code lookup}) is an {@link
 * UnreadableAnswer}; an {@code apply} that throws outside it, or any call past the patience, is an
 * {@link AmbiguousAnswer}.
 */
public final class PluginUnderCheck implements ProviderUnderCheck {

  private final CleanupProvider plugin;
  private final String description;
  private final Duration patience;
  private final Guarantees claims;
  private final ExecutorService calls;

  /**
   * {@code description}: what the report calls it, e.g. "java plugin com.acme.Ledger"; the
   * guarantees are asked once, here.
   */
  public PluginUnderCheck(CleanupProvider plugin, String description, Duration patience) {
    this.plugin = plugin;
    this.description = description;
    this.patience = patience;
    AtomicInteger threads = new AtomicInteger();
    this.calls =
        Executors.newCachedThreadPool(
            task -> {
              Thread thread = new Thread(task, "provider-check-call-" + threads.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    Guarantees declared = plugin.guarantees();
    if (declared == null) {
      throw new IllegalArgumentException(
          description + ": guarantees() returned null (it must declare what it claims)");
    }
    this.claims = declared;
  }

  @Override
  public String description() {
    return description;
  }

  @Override
  public Guarantees claims() {
    return claims;
  }

  @Override
  public String claimsSource() {
    return "declared by the plugin";
  }

  @Override
  public boolean comparesIdentityOnly() {
    return true;
  }

  @Override
  public Plan plan(Item item) {
    return answer(within(() -> plugin.plan(item)), "plan", false);
  }

  @Override
  public Receipt apply(Cleanup cleanup) {
    return answer(within(() -> plugin.apply(cleanup)), "apply", true);
  }

  @Override
  public Optional<Receipt> lookup(Item item, String idempotencyKey) {
    return answer(within(() -> plugin.lookup(item, idempotencyKey)), "lookup", false);
  }

  @Override
  public Optional<CompletableFuture<Receipt>> applyAndAbandon(Cleanup cleanup) {
    CompletableFuture<Receipt> started = new CompletableFuture<>();
    CompletableFuture<Void> running = new CompletableFuture<>();
    calls.execute(
        () -> {
          running.complete(null);
          try {
            started.complete(plugin.apply(cleanup));
          } catch (Throwable e) {
            started.completeExceptionally(e);
          }
        });
    running.join(); // the call is on its way; nobody waits for its answer now
    return Optional.of(started);
  }

  @Override
  public void close() {
    calls.shutdownNow();
    plugin.close();
  }

  private <T> CompletableFuture<T> within(Supplier<T> call) {
    return CompletableFuture.supplyAsync(call, calls);
  }

  private <T> T answer(CompletableFuture<T> call, String method, boolean mutation) {
    T value;
    try {
      value = call.get(patience.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      call.cancel(true);
      throw new AmbiguousAnswer(
          method + " gave no answer within " + patience.toMillis() + " ms (abandoned)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AmbiguousAnswer(method + " was interrupted");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof ProviderFailure failure) {
        throw failure;
      }
      String what = method + " threw " + cause.getClass().getName() + firstLine(cause);
      if (mutation) {
        throw new AmbiguousAnswer(what);
      }
      throw new UnreadableAnswer(0, what + ", which the contract does not allow");
    }
    if (value == null) {
      throw new UnreadableAnswer(0, method + " returned null, which the contract does not allow");
    }
    return value;
  }

  private static String firstLine(Throwable e) {
    String message = e.getMessage();
    if (message == null || message.isBlank()) {
      return "";
    }
    String line = message.lines().findFirst().orElse("");
    return ": " + (line.length() > 200 ? line.substring(0, 200) + "..." : line);
  }
}

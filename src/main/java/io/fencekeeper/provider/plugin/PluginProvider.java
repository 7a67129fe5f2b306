package io.fencekeeper.provider.plugin;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.ProviderFailure;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Java provider plugin behind the provider SPI (docs/design.md, "The provider boundary"): every
 * call runs on a pool of the provider's own, never on the node's dispatcher, at most {@code
 * threads} at once (the provider's budget, else the node's workers) and at most 16 per thread
 * waiting; beyond that a call fails at once, nothing sent (transient). Each call has the provider's
 * request timeout from when it was asked: one still waiting then is never started (transient), one
 * still running is abandoned and its thread interrupted (an {@code apply}: ambiguous, reconciled by
 * lookup after its deadline; a {@code plan} or {@code lookup}: transient). What the plugin answers
 * outside its contract (a null, an exception that is not a {@link ProviderFailure}) is ambiguous
 * for an {@code apply} and transient otherwise, and logged once per kind in one line naming the
 * class and what it did. The stage completes on the thread that answered (a pool thread, or the
 * timer's), as the jdbc provider's do.
 */
public final class PluginProvider implements Provider {

  private static final Logger log = LoggerFactory.getLogger(PluginProvider.class);

  /** How many kinds of misbehaviour are logged. */
  static final int REPORTED = 64;

  /** How many calls may wait for a thread, per thread. */
  static final int QUEUED_PER_THREAD = 16;

  private final String name;
  private final String className;
  private final CleanupProvider plugin;
  private final URLClassLoader loader;
  private final long timeoutNanos;
  private final Duration requestTimeout;
  private final ThreadPoolExecutor pool;
  private final ScheduledThreadPoolExecutor timer;
  private final Set<String> reported = ConcurrentHashMap.newKeySet();

  private PluginProvider(
      String name, PluginLoader.Loaded loaded, Duration requestTimeout, int threads) {
    this.name = name;
    this.className = loaded.className();
    this.plugin = loaded.plugin();
    this.loader = loaded.loader();
    this.requestTimeout = requestTimeout;
    this.timeoutNanos = requestTimeout.toNanos();
    AtomicInteger counter = new AtomicInteger();
    this.pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(threads * QUEUED_PER_THREAD),
            task -> {
              Thread thread =
                  new Thread(task, "fencekeeper-plugin-" + name + "-" + counter.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    pool.allowCoreThreadTimeOut(true);
    this.timer =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, "fencekeeper-plugin-" + name + "-timeouts");
              thread.setDaemon(true);
              return thread;
            });
    timer.setRemoveOnCancelPolicy(true);
  }

  /**
   * Loads provider {@code name}'s plugin and starts its pool of {@code threads} (see {@link
   * PluginSettings#threadsFor}); throws {@link PluginProblem} when the plugin cannot be loaded.
   */
  public static PluginProvider start(
      String name, PluginSettings settings, Duration requestTimeout, int threads) {
    PluginLoader.Loaded loaded = PluginLoader.load(name, settings);
    log.info(
        "provider {}: java plugin {} from {} ({} calls at once, request timeout {}; it claims {})",
        name,
        loaded.className(),
        settings.path(),
        threads,
        requestTimeout,
        claims(loaded));
    return new PluginProvider(name, loaded, requestTimeout, threads);
  }

  /** The plugin's instance (tests read what it recorded). */
  public CleanupProvider plugin() {
    return plugin;
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    Item asked = SdkMapping.item(item);
    return call(Method.PLAN, () -> plugin.plan(asked), null);
  }

  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    io.fencekeeper.sdk.provider.Cleanup asked;
    try {
      asked = SdkMapping.cleanup(cleanup);
    } catch (IllegalArgumentException unfit) {
      // a plan the API cannot carry (an action over 128 characters): nothing was sent
      return CompletableFuture.failedFuture(
          new ProviderException(
              new ProviderError.Permanent(
                  "provider "
                      + name
                      + ": the cleanup cannot be handed to the plugin: "
                      + unfit.getMessage())));
    }
    return call(Method.APPLY, () -> plugin.apply(asked), cleanup.idempotencyKey());
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
    Item asked = SdkMapping.item(item);
    return call(Method.LOOKUP, () -> plugin.lookup(asked, idempotencyKey), idempotencyKey);
  }

  /**
   * Stops taking calls, lets the ones running end (a request timeout at most), closes the plugin.
   */
  @Override
  public void close() {
    pool.shutdown();
    try {
      if (!pool.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS)) {
        pool.shutdownNow();
      }
    } catch (InterruptedException e) {
      pool.shutdownNow();
      Thread.currentThread().interrupt();
    }
    timer.shutdownNow();
    Thread closing =
        new Thread(
            () -> {
              try {
                plugin.close();
              } catch (Throwable e) {
                report("close() threw " + PluginProblem.said(e));
              }
            },
            "fencekeeper-plugin-" + name + "-close");
    closing.setDaemon(true);
    closing.setContextClassLoader(loader);
    closing.start();
    try {
      closing.join(requestTimeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closing.isAlive()) {
      report("close() did not return within " + requestTimeout);
    }
    PluginLoader.closeQuietly(loader);
  }

  private enum Method {
    PLAN("plan"),
    APPLY("apply"),
    LOOKUP("lookup");

    final String word;

    Method(String word) {
      this.word = word;
    }
  }

  /** A plugin call as a function: what it returns, or throws. */
  @FunctionalInterface
  private interface Invocation {
    Object invoke();
  }

  @SuppressWarnings("unchecked")
  private <T> CompletionStage<T> call(Method method, Invocation invocation, String key) {
    Call call = new Call(method, invocation, key);
    try {
      call.timeout = timer.schedule(call::expire, timeoutNanos, TimeUnit.NANOSECONDS);
      pool.execute(call);
    } catch (RejectedExecutionException e) {
      if (call.timeout != null) {
        call.timeout.cancel(false);
      }
      return CompletableFuture.failedFuture(
          new ProviderException(
              new ProviderError.Transient(
                  "provider "
                      + name
                      + ": no call made: "
                      + (pool.isShutdown()
                          ? "the plugin is closed"
                          : "its " + pool.getMaximumPoolSize() + " threads and queue are full"))));
    }
    return (CompletionStage<T>) call.answer;
  }

  /** One call: queued, then running, then done or abandoned at its timeout, exactly once. */
  private final class Call implements Runnable {
    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int DONE = 2;
    private static final int ABANDONED = 3;

    final CompletableFuture<Object> answer = new CompletableFuture<>();
    final Method method;
    final Invocation invocation;
    final String key;
    volatile ScheduledFuture<?> timeout;
    private int state = QUEUED;
    private Thread runner;

    Call(Method method, Invocation invocation, String key) {
      this.method = method;
      this.invocation = invocation;
      this.key = key;
    }

    @Override
    public void run() {
      Thread thread = Thread.currentThread();
      synchronized (this) {
        if (state != QUEUED) {
          return; // expired while queued: never started
        }
        state = RUNNING;
        runner = thread;
      }
      Object value = null;
      Throwable failure = null;
      ClassLoader nodeLoader = thread.getContextClassLoader();
      thread.setContextClassLoader(loader);
      try {
        value = invocation.invoke();
      } catch (Throwable e) {
        failure = e;
      } finally {
        thread.setContextClassLoader(nodeLoader);
      }
      boolean answered;
      synchronized (this) {
        answered = state == RUNNING;
        state = answered ? DONE : state;
        runner = null;
        // an interrupt meant for this call ends with it, before the thread takes the next one
        Thread.interrupted();
      }
      if (!answered) {
        return; // abandoned at its timeout: the answer that comes late is ignored
      }
      ScheduledFuture<?> pending = timeout;
      if (pending != null) {
        pending.cancel(false);
      }
      settle(value, failure);
    }

    void expire() {
      boolean started;
      synchronized (this) {
        if (state == DONE || state == ABANDONED) {
          return;
        }
        started = state == RUNNING;
        state = ABANDONED;
        if (runner != null) {
          runner.interrupt();
        }
      }
      if (!started) {
        pool.remove(this);
        fail(
            new ProviderError.Transient(
                "provider "
                    + name
                    + ": "
                    + method.word
                    + " waited "
                    + requestTimeout
                    + " for a thread of the plugin and was not started"));
        return;
      }
      String what =
          "plugin " + className + ": " + method.word + " did not return within " + requestTimeout;
      report(what);
      fail(
          method == Method.APPLY
              ? new ProviderError.Ambiguous(what + " (abandoned: it may have applied)")
              : new ProviderError.Transient(what));
    }

    private void settle(Object value, Throwable failure) {
      if (failure instanceof ProviderFailure expected) {
        if (method == Method.LOOKUP
            && !(expected instanceof ProviderFailure.Throttled)
            && !(expected instanceof ProviderFailure.Transient)
            && !(expected instanceof ProviderFailure.Permanent)) {
          outsideContract("lookup threw " + expected.getClass().getSimpleName());
          return;
        }
        fail(SdkMapping.error(expected));
        return;
      }
      if (failure != null) {
        outsideContract(method.word + " threw " + PluginProblem.said(failure));
        return;
      }
      if (value == null) {
        outsideContract(method.word + " returned null");
        return;
      }
      switch (method) {
        case PLAN -> answer.complete(SdkMapping.plan((io.fencekeeper.sdk.provider.Plan) value));
        case APPLY ->
            answer.complete(SdkMapping.receipt(key, (io.fencekeeper.sdk.provider.Receipt) value));
        case LOOKUP -> {
          Optional<?> found = (Optional<?>) value;
          answer.complete(
              found.map(r -> SdkMapping.receipt(key, (io.fencekeeper.sdk.provider.Receipt) r)));
        }
      }
    }

    /** An answer the contract forbids: ambiguous for an apply, transient for a read. */
    private void outsideContract(String what) {
      String line = "plugin " + className + ": " + what;
      report(line);
      fail(
          method == Method.APPLY
              ? new ProviderError.Ambiguous(line + " (it may have applied)")
              : new ProviderError.Transient(line));
    }

    private void fail(ProviderError error) {
      answer.completeExceptionally(new ProviderException(error));
    }
  }

  /**
   * One warning per kind of misbehaviour (at most {@value #REPORTED} kinds: a plugin's messages may
   * vary without end); the items' audit trails keep every occurrence.
   */
  private void report(String line) {
    if (reported.size() < REPORTED && reported.add(line)) {
      log.warn("provider {}: {} (logged once; each item's audit trail has it)", name, line);
    }
  }

  private static String claims(PluginLoader.Loaded loaded) {
    var g = loaded.guarantees();
    return (g.fences() ? "fencing" : "no fencing")
        + ", "
        + (g.keepsKeys() ? "keys kept" : "no keys")
        + ", "
        + (g.honoursDeadline() ? "deadlines honoured" : "no deadline");
  }
}

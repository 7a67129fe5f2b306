package io.fencekeeper.provider.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.plugins.MisbehavingPlugin;
import io.fencekeeper.testing.plugins.PluginJars;
import io.fencekeeper.testing.plugins.ProbingPlugin;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plugin behind the worker's provider SPI: its calls run on threads of its own, each within the
 * request timeout; what it does outside its contract (a null, an exception, a call that hangs) is
 * an ambiguous apply or a transient read, never a stuck worker or a lost answer.
 */
class PluginProviderTest {

  static final Duration TIMEOUT = Duration.ofMillis(500);
  static final ItemId ITEM = ItemId.of("night", LocalDate.of(2026, 11, 29), "acct-1", "c1");

  @TempDir static Path dir;
  static Path plugins;

  @BeforeAll
  static void jars() {
    plugins = PluginJars.directoryWithTestPlugins(dir.resolve("plugins"));
  }

  static PluginProvider start(Class<?> type, Map<String, String> settings, int threads) {
    return PluginProvider.start(
        "ledger",
        new PluginSettings("ledger", type.getName(), plugins, settings, 0),
        TIMEOUT,
        threads);
  }

  static Cleanup cleanup(Plan plan, long token) {
    return new Cleanup(ITEM, plan, ITEM.idempotencyKey(), token, Instant.now().plus(TIMEOUT));
  }

  static ProviderError error(CompletionStage<?> stage) throws Exception {
    try {
      stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return ProviderError.from(e);
    }
    throw new AssertionError("the stage succeeded");
  }

  @Test
  void callsRunOnThePluginsOwnThreadsWithItsOwnContextClassLoader() throws Exception {
    try (PluginProvider provider = start(ProbingPlugin.class, Map.of(), 2)) {
      Plan plan = provider.plan(ITEM).toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertTrue(
          plan.description().contains("thread=fencekeeper-plugin-ledger-"), plan.description());
      assertTrue(plan.description().contains("ownContextLoader=true"), plan.description());
      assertNotEquals(
          Thread.currentThread().getContextClassLoader(),
          provider.plugin().getClass().getClassLoader());
    }
  }

  @Test
  void aPluginThatKeepsItsContractAppliesReplaysAndIsFound() throws Exception {
    try (PluginProvider provider = start(ProbingPlugin.class, Map.of(), 2)) {
      Plan plan = provider.plan(ITEM).toCompletableFuture().get(10, TimeUnit.SECONDS);
      Receipt first =
          provider.apply(cleanup(plan, 1)).toCompletableFuture().get(10, TimeUnit.SECONDS);
      Receipt again =
          provider.apply(cleanup(plan, 2)).toCompletableFuture().get(10, TimeUnit.SECONDS);
      Optional<Receipt> found =
          provider
              .lookup(ITEM, ITEM.idempotencyKey())
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);

      assertEquals(Receipt.APPLIED, first.status());
      assertEquals(Receipt.REPLAYED, again.status());
      assertEquals(first.effectId(), again.effectId());
      assertEquals(first.effectId(), found.orElseThrow().effectId());
      assertEquals(ITEM.idempotencyKey(), found.get().idempotencyKey());
      assertInstanceOf(
          ProviderError.StaleToken.class,
          error(provider.apply(cleanup(plan, 1))),
          "token 1 after 2");
    }
  }

  @Test
  void anApplyThatHangsPastTheTimeoutIsAmbiguousAndItsThreadIsInterruptedAndFreed()
      throws Exception {
    try (PluginProvider provider = start(MisbehavingPlugin.class, Map.of("apply", "hang"), 1)) {
      Plan plan = provider.plan(ITEM).toCompletableFuture().get(10, TimeUnit.SECONDS);

      ProviderError ambiguous = error(provider.apply(cleanup(plan, 1)));

      assertEquals(
          new ProviderError.Ambiguous(
              "plugin "
                  + MisbehavingPlugin.class.getName()
                  + ": apply did not return within PT0.5S (abandoned: it may have applied)"),
          ambiguous);
      AtomicInteger interrupted = staticOf(provider, "interrupted");
      Await.until(
          Duration.ofSeconds(10),
          "the hung call's thread was interrupted",
          () -> interrupted.get() == 1);
      // its one thread is free again: the next call is answered
      assertEquals(plan, provider.plan(ITEM).toCompletableFuture().get(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void aCallWaitingBehindAStuckOneIsNeverStartedAndTransient() throws Exception {
    try (PluginProvider provider = start(MisbehavingPlugin.class, Map.of("apply", "stuck"), 1)) {
      Plan plan = provider.plan(ITEM).toCompletableFuture().get(10, TimeUnit.SECONDS);
      CompletionStage<Receipt> stuck = provider.apply(cleanup(plan, 1));
      CompletionStage<Optional<Receipt>> queued = provider.lookup(ITEM, ITEM.idempotencyKey());

      assertInstanceOf(ProviderError.Ambiguous.class, error(stuck));
      ProviderError notStarted = error(queued);
      assertEquals(
          new ProviderError.Transient(
              "provider ledger: lookup waited PT0.5S for a thread of the plugin and was not"
                  + " started"),
          notStarted);
      staticOf(provider, "unstick", java.util.concurrent.CountDownLatch.class).countDown();
    }
  }

  @SuppressWarnings("unchecked")
  static <T> T staticOf(PluginProvider provider, String field, Class<T> type) throws Exception {
    return (T) provider.plugin().getClass().getField(field).get(null);
  }

  static AtomicInteger staticOf(PluginProvider provider, String field) throws Exception {
    return staticOf(provider, field, AtomicInteger.class);
  }

  @Test
  void answersOutsideTheContractAreAmbiguousForAnApplyAndTransientForAReadInOneLine()
      throws Exception {
    try (PluginProvider nulls =
            start(MisbehavingPlugin.class, Map.of("apply", "null", "plan", "null"), 2);
        PluginProvider throwing =
            start(MisbehavingPlugin.class, Map.of("apply", "throw", "lookup", "throw"), 2)) {
      Plan plan = throwing.plan(ITEM).toCompletableFuture().get(10, TimeUnit.SECONDS);
      String plugin = "plugin " + MisbehavingPlugin.class.getName() + ": ";

      ProviderError nullApply = error(nulls.apply(cleanup(plan, 1)));
      ProviderError nullPlan = error(nulls.plan(ITEM));
      ProviderError thrownApply = error(throwing.apply(cleanup(plan, 1)));
      ProviderError thrownLookup = error(throwing.lookup(ITEM, ITEM.idempotencyKey()));

      assertEquals(
          new ProviderError.Ambiguous(plugin + "apply returned null (it may have applied)"),
          nullApply);
      assertEquals(new ProviderError.Transient(plugin + "plan returned null"), nullPlan);
      assertEquals(
          new ProviderError.Ambiguous(
              plugin
                  + "apply threw java.lang.IllegalStateException: apply failed inside the plugin"
                  + " (it may have applied)"),
          thrownApply);
      assertEquals(
          new ProviderError.Transient(
              plugin
                  + "lookup threw java.lang.IllegalStateException: lookup failed inside the plugin"),
          thrownLookup);
    }
  }

  @Test
  void aClosedPluginTakesNoCallAndSaysSo() throws Exception {
    PluginProvider provider = start(ProbingPlugin.class, Map.of(), 1);
    provider.close();
    ProviderError refused = error(provider.plan(ITEM));
    assertEquals(
        new ProviderError.Transient("provider ledger: no call made: the plugin is closed"),
        refused);
  }
}

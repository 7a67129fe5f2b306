package io.fencekeeper.testing.plugins;

import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.ProviderContext;
import io.fencekeeper.sdk.provider.ProviderFailure;
import io.fencekeeper.sdk.provider.Receipt;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A provider plugin that keeps its ledger in memory and every guarantee (fencing, keys, the
 * deadline), in protocol 1.1's order. Its subclasses each break one, for the provider check to
 * find. It uses the plugin API and the JDK only, so a test can put it in a jar and load it as a
 * node does. Accounts named {@code none-...} have nothing to clean up.
 */
public class LedgerPlugin implements CleanupProvider {

  /** What the plugin does for real; a subclass turns one off and still claims it. */
  protected boolean fences = true;

  protected boolean keepsKeys = true;
  protected boolean honoursDeadline = true;
  protected boolean looksUp = true;

  private final Map<String, Long> highestToken = new HashMap<>();
  private final Map<String, Effect> effects = new HashMap<>();
  private final Map<String, Integer> applications = new HashMap<>();
  private final AtomicLong ids = new AtomicLong();

  /** One effect under a key: the first cleanup's identity, its id and instant. */
  record Effect(String effectId, Instant appliedAt, Cleanup cleanup) {}

  public LedgerPlugin() {}

  public LedgerPlugin(ProviderContext context) {}

  @Override
  public Guarantees guarantees() {
    return Guarantees.ALL;
  }

  @Override
  public Plan plan(Item item) {
    if (item.accountId().startsWith("none-")) {
      return Plan.nothing(item.accountId() + " is reconciled");
    }
    long amount = 100 + Math.floorMod(item.accountId().hashCode(), 900);
    return Plan.action(
        "write-off", amount, "EUR", "write off " + amount + " cents on " + item.accountId());
  }

  @Override
  public synchronized Receipt apply(Cleanup cleanup) {
    String key = cleanup.idempotencyKey();
    long highest = highestToken.getOrDefault(key, Long.MIN_VALUE);
    if (fences && cleanup.fencingToken() < highest) {
      throw new ProviderFailure.StaleToken(cleanup.fencingToken(), highest);
    }
    highestToken.put(key, Math.max(highest, cleanup.fencingToken()));
    Effect existing = effects.get(key);
    if (keepsKeys && existing != null) {
      if (!existing.cleanup().sameEffect(cleanup)) {
        throw new ProviderFailure.KeyReused("key " + key + " holds another effect");
      }
      return Receipt.replayed(existing.effectId(), existing.appliedAt());
    }
    if (honoursDeadline && !Instant.now().isBefore(cleanup.deadline())) {
      throw new ProviderFailure.DeadlinePassed("the deadline of " + key + " has passed");
    }
    Effect effect = new Effect("ledger-" + ids.incrementAndGet(), Instant.now(), cleanup);
    effects.putIfAbsent(key, effect);
    applications.merge(key, 1, Integer::sum);
    return Receipt.applied(effect.effectId(), effect.appliedAt());
  }

  @Override
  public synchronized Optional<Receipt> lookup(Item item, String idempotencyKey) {
    Effect effect = looksUp ? effects.get(idempotencyKey) : null;
    return Optional.ofNullable(effect)
        .map(found -> Receipt.applied(found.effectId(), found.appliedAt()));
  }

  /** How many times a cleanup was applied under each key (a replay adds nothing). */
  public synchronized Map<String, Integer> applications() {
    return Map.copyOf(applications);
  }
}

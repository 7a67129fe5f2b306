package io.fencekeeper.provider.plugin;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.ProviderFailure;

/**
 * The provider SPI's types and the public API's, both ways: a plugin sees only the API, the worker
 * only the SPI. The API's failures mirror protocol 1.1; the SPI's are what the worker decides on,
 * so {@code key_in_use} and {@code deadline_passed} are transient (nothing applied, retry) and
 * {@code key_reused} is permanent, as the http client reads them.
 */
public final class SdkMapping {

  /** A plugin's message goes into the audit trail: one line, bounded. */
  static final int MESSAGE_LIMIT = 300;

  private SdkMapping() {}

  public static Item item(ItemId id) {
    return new Item(id.job(), id.businessDate(), id.accountId(), id.cursor());
  }

  public static ItemId itemId(Item item) {
    return ItemId.of(item.job(), item.businessDate(), item.accountId(), item.cursor());
  }

  public static io.fencekeeper.sdk.provider.Plan plan(Plan plan) {
    return new io.fencekeeper.sdk.provider.Plan(
        plan.nothingToDo(), plan.action(), plan.amountMinor(), plan.currency(), plan.description());
  }

  public static Plan plan(io.fencekeeper.sdk.provider.Plan plan) {
    return new Plan(
        plan.nothingToDo(), plan.action(), plan.amountMinor(), plan.description(), plan.currency());
  }

  public static io.fencekeeper.sdk.provider.Cleanup cleanup(Cleanup cleanup) {
    return new io.fencekeeper.sdk.provider.Cleanup(
        item(cleanup.item()),
        plan(cleanup.plan()),
        cleanup.idempotencyKey(),
        cleanup.fencingToken(),
        cleanup.deadline());
  }

  public static Cleanup cleanup(io.fencekeeper.sdk.provider.Cleanup cleanup) {
    return new Cleanup(
        itemId(cleanup.item()),
        plan(cleanup.plan()),
        cleanup.idempotencyKey(),
        cleanup.fencingToken(),
        cleanup.deadline());
  }

  public static Receipt receipt(String idempotencyKey, io.fencekeeper.sdk.provider.Receipt r) {
    return new Receipt(
        idempotencyKey,
        r.effectId(),
        r.replayed() ? Receipt.REPLAYED : Receipt.APPLIED,
        r.appliedAt());
  }

  public static io.fencekeeper.sdk.provider.Receipt receipt(Receipt receipt) {
    return new io.fencekeeper.sdk.provider.Receipt(
        receipt.effectId(), receipt.appliedAt(), Receipt.REPLAYED.equals(receipt.status()));
  }

  /** The worker's error for a plugin's failure. */
  public static ProviderError error(ProviderFailure failure) {
    String message = bounded(failure.getMessage());
    if (failure instanceof ProviderFailure.Throttled throttled) {
      return new ProviderError.Throttled(throttled.retryAfter(), message);
    }
    if (failure instanceof ProviderFailure.StaleToken stale) {
      return new ProviderError.StaleToken(stale.presented(), stale.highestSeen());
    }
    if (failure instanceof ProviderFailure.Permanent) {
      return new ProviderError.Permanent(message);
    }
    if (failure instanceof ProviderFailure.KeyReused) {
      return new ProviderError.Permanent("key reused: " + message);
    }
    if (failure instanceof ProviderFailure.KeyInUse) {
      return new ProviderError.Transient("key in use: " + message);
    }
    if (failure instanceof ProviderFailure.DeadlinePassed) {
      return new ProviderError.Transient("deadline passed: " + message);
    }
    return new ProviderError.Transient(message);
  }

  /** The plugin API's failure for the worker's error (a provider checked through the API). */
  public static RuntimeException failure(ProviderError error) {
    if (error instanceof ProviderError.Throttled t) {
      return new ProviderFailure.Throttled(t.retryAfter(), t.message());
    }
    if (error instanceof ProviderError.Permanent p) {
      return new ProviderFailure.Permanent(p.message());
    }
    if (error instanceof ProviderError.StaleToken s) {
      return new ProviderFailure.StaleToken(s.presented(), s.highestSeen());
    }
    if (error instanceof ProviderError.Ambiguous a) {
      return new io.fencekeeper.sdk.provider.check.AmbiguousAnswer(a.message());
    }
    return new ProviderFailure.Transient(error.message());
  }

  static String bounded(String message) {
    if (message == null) {
      return "";
    }
    String line = message.lines().findFirst().orElse("").trim();
    return line.length() > MESSAGE_LIMIT ? line.substring(0, MESSAGE_LIMIT) + "..." : line;
  }
}

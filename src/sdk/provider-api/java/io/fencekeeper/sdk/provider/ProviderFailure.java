package io.fencekeeper.sdk.provider;

import java.time.Duration;
import java.util.Objects;

/**
 * Why a call failed: the closed set of failures a {@link CleanupProvider} may throw, one for each
 * answer of provider protocol 1.1. Anything else a call throws is a bug in the provider:
 * Fencekeeper then treats an {@code apply} as ambiguous (it may have applied: the key is looked up
 * after the deadline) and a {@code plan} or {@code lookup} as transient.
 *
 * <p>These are outcomes, not bugs: they carry no stack trace.
 */
public abstract sealed class ProviderFailure extends RuntimeException
    permits ProviderFailure.Throttled,
        ProviderFailure.Transient,
        ProviderFailure.Permanent,
        ProviderFailure.StaleToken,
        ProviderFailure.KeyInUse,
        ProviderFailure.KeyReused,
        ProviderFailure.DeadlinePassed {

  private ProviderFailure(String message, Throwable cause) {
    super(Objects.requireNonNull(message, "message"), cause, true, false);
  }

  /**
   * The provider is shedding load: nothing was applied; Fencekeeper waits {@code retryAfter} and
   * lowers its concurrency (protocol: 429).
   */
  public static final class Throttled extends ProviderFailure {
    private final Duration retryAfter;

    public Throttled(Duration retryAfter, String message) {
      super(message, null);
      if (retryAfter == null || retryAfter.isNegative()) {
        throw new IllegalArgumentException("retryAfter must be zero or more");
      }
      this.retryAfter = retryAfter;
    }

    public Duration retryAfter() {
      return retryAfter;
    }
  }

  /**
   * Nothing was applied by this call (a connection refused, a lock timeout, a rollback): safe to
   * retry later with the same key and token (protocol: 408, 503 before applying).
   */
  public static final class Transient extends ProviderFailure {
    public Transient(String message) {
      this(message, null);
    }

    public Transient(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Retrying cannot help (an unknown account, a cleanup the provider will never accept): nothing
   * was applied, and the item fails for a person to look at (protocol: 400, 422 and other 4xx).
   */
  public static final class Permanent extends ProviderFailure {
    public Permanent(String message) {
      this(message, null);
    }

    public Permanent(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * The fencing token is lower than the highest already seen under the key: the caller lost its
   * lease; nothing was applied (protocol: 409 {@code stale_token}).
   */
  public static final class StaleToken extends ProviderFailure {
    private final long presented;
    private final long highestSeen;

    public StaleToken(long presented, long highestSeen) {
      super(
          "fencing token " + presented + " is lower than " + highestSeen + ", already seen", null);
      this.presented = presented;
      this.highestSeen = highestSeen;
    }

    public long presented() {
      return presented;
    }

    public long highestSeen() {
      return highestSeen;
    }
  }

  /**
   * Another call with the same key is still being processed: nothing was applied by this one; a
   * retry later replays the first one's effect (protocol: 409 {@code key_in_use}).
   */
  public static final class KeyInUse extends ProviderFailure {
    public KeyInUse(String message) {
      super(message, null);
    }
  }

  /**
   * The key's effect exists with another identity (item, action, amount or currency): nothing was
   * applied; two cleanups collided on a key, which retrying cannot fix (protocol: 422 {@code
   * key_reused}).
   */
  public static final class KeyReused extends ProviderFailure {
    public KeyReused(String message) {
      super(message, null);
    }
  }

  /**
   * The cleanup's deadline passed before it could commit: nothing was applied (protocol: 409
   * {@code deadline_passed}).
   */
  public static final class DeadlinePassed extends ProviderFailure {
    public DeadlinePassed(String message) {
      super(message, null);
    }
  }
}

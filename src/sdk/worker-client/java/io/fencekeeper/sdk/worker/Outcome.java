package io.fencekeeper.sdk.worker;

import java.time.Duration;

/**
 * What a handler found or did. {@link Applied}, {@link Found} and {@link NothingToDo} complete the
 * item (the effect recorded and the item DONE in one call); {@link Failed} hands it back for a retry
 * or fails it; {@link Ambiguous} says the handler does not know whether its write reached the
 * target (the next holder looks the key up first); {@link Release} hands it back untouched.
 */
public sealed interface Outcome
    permits Outcome.Applied,
        Outcome.Found,
        Outcome.NothingToDo,
        Outcome.Failed,
        Outcome.Ambiguous,
        Outcome.Release {

  /** This attempt applied the cleanup at the target; {@code reference}: the target's id of it. */
  record Applied(String reference, String detail) implements Outcome {}

  /** A lookup by the idempotency key found the cleanup applied already. */
  record Found(String reference, String detail) implements Outcome {}

  /** There was nothing to clean up. */
  record NothingToDo(String detail) implements Outcome {}

  /**
   * Nothing was written, and the handler says why: {@code retryable} hands the item back (after
   * {@code retryAfter}, or at once when null); otherwise the item is FAILED.
   */
  record Failed(String error, boolean retryable, Duration retryAfter) implements Outcome {}

  /** The write may or may not have reached the target (a timeout after sending, a reset). */
  record Ambiguous(String reason) implements Outcome {}

  /** Give the item back without an error (nothing was written). */
  record Release() implements Outcome {}

  static Outcome applied(String reference) {
    return new Applied(reference, null);
  }

  static Outcome found(String reference) {
    return new Found(reference, null);
  }

  static Outcome nothingToDo() {
    return new NothingToDo(null);
  }

  static Outcome failed(String error, boolean retryable) {
    return new Failed(error, retryable, null);
  }

  static Outcome ambiguous(String reason) {
    return new Ambiguous(reason);
  }

  static Outcome release() {
    return new Release();
  }
}

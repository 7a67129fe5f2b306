package io.fencekeeper.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting on a condition with a deadline: the only way tests wait. */
public final class Await {

  private Await() {}

  public static void until(Duration timeout, String what, BooleanSupplier condition) {
    until(timeout, what, condition, () -> "");
  }

  /**
   * As {@link #until(Duration, String, BooleanSupplier)}; on a timeout the failure also carries
   * {@code explain}, what the waiting test could see then (a process test's node logs, a cluster's
   * members), taken only when it is needed.
   */
  public static void until(
      Duration timeout, String what, BooleanSupplier condition, Supplier<String> explain) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        String seen = explain.get();
        throw new AssertionError(
            "timed out after "
                + timeout
                + " waiting for "
                + what
                + (seen.isEmpty() ? "" : "; " + seen));
      }
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
    }
  }

  /** Polls {@code value} until {@code accept} holds; returns the accepted value. */
  public static <T> T until(
      Duration timeout, String what, Supplier<T> value, java.util.function.Predicate<T> accept) {
    long deadline = System.nanoTime() + timeout.toNanos();
    T last = value.get();
    while (!accept.test(last)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after " + timeout + " waiting for " + what + "; last: " + last);
      }
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
      last = value.get();
    }
    return last;
  }
}

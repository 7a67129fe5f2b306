package io.fencekeeper.sdk.worker;

import java.time.Duration;

/**
 * A lease as its holder keeps it: the fencing token to carry to the target and to send with every
 * command, and until when it holds by this process's own clock (the node's answer said how long it
 * has left; the client counts from when the answer arrived, so no two clocks are compared).
 * Renewed by the client at a third of its length; once a renewal is refused or the time is up it
 * is lost, for good.
 */
public final class Lease {

  private final String itemId;
  private final long fencingToken;
  private final String idempotencyKey;
  private final Duration length;
  private volatile long expiresAtNanos;
  private volatile boolean lost;
  private volatile boolean ended;

  Lease(String itemId, long fencingToken, String idempotencyKey, Duration length, long nowNanos, long leftMillis) {
    this.itemId = itemId;
    this.fencingToken = fencingToken;
    this.idempotencyKey = idempotencyKey;
    this.length = length;
    this.expiresAtNanos = nowNanos + Duration.ofMillis(leftMillis).toNanos();
  }

  /**
   * A lease of {@code left} from now, as a claim would grant it: for a handler's own tests (the
   * worker builds the real ones from the node's answers).
   */
  public static Lease of(String itemId, long fencingToken, String idempotencyKey, Duration left) {
    return new Lease(
        itemId, fencingToken, idempotencyKey, left, System.nanoTime(), left.toMillis());
  }

  public String itemId() {
    return itemId;
  }

  /** The fencing token: every write of this item at the target carries it. */
  public long fencingToken() {
    return fencingToken;
  }

  public String idempotencyKey() {
    return idempotencyKey;
  }

  /** The lease's length, as asked for. */
  public Duration length() {
    return length;
  }

  /** Time left by this process's clock; zero once lost or lapsed. */
  public Duration remaining() {
    if (lost) {
      return Duration.ZERO;
    }
    long left = expiresAtNanos - System.nanoTime();
    return left <= 0 ? Duration.ZERO : Duration.ofNanos(left);
  }

  /** Whether the lease is lost (a renewal refused) or has run out. */
  public boolean isLost() {
    return lost || System.nanoTime() - expiresAtNanos >= 0;
  }

  /** Whether the node refused a command of this lease: it is another's, or it lapsed there. */
  boolean refused() {
    return lost;
  }

  /**
   * Throws unless the lease still has more than {@code margin} left: call it before each write to
   * the target, so that no write starts that the lease may not outlive (the fencing token at the
   * target still decides if it does).
   */
  public void ensureLive(Duration margin) throws LeaseLostException {
    if (remaining().compareTo(margin) <= 0) {
      throw new LeaseLostException("the lease of " + itemId + " is lost or about to end");
    }
  }

  /** A renewal sent at {@code sentNanos} was answered: the lease holds for its length from then. */
  void renewed(long sentNanos, long leftMillis) {
    long until = sentNanos + Duration.ofMillis(leftMillis).toNanos();
    if (until - expiresAtNanos > 0) {
      expiresAtNanos = until;
    }
  }

  void lose() {
    lost = true;
  }

  /** The holder's last command (complete, fail, release) was answered: nothing more to renew. */
  void end() {
    ended = true;
  }

  boolean ended() {
    return ended;
  }
}

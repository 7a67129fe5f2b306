package io.fencekeeper.provider.budget;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The renewals of one provider's permits on one node, without the actor ({@link PermitLeaser} wires
 * it to timers and messages): when to renew, and what a grant from the keeper may change.
 *
 * <p>At most one renewal is on its way; one overdue by a quarter lease (the keeper moving) does not
 * hold the next back. A grant may make the pool's permits grow only when the keeper that sent it
 * knows this node's latest report: the answer to the latest renewal, or a push from the same keeper
 * incarnation while no renewal is on its way. Anything else (a late answer, a push from a keeper
 * that has since been replaced) may only shrink them, so a report never understates what the node
 * may use.
 */
final class LeaseRenewals {

  /** A renewal to send: its number and what the pool reports. */
  record Renewal(long seq, PermitPool.Report report) {}

  private final PermitPool pool;
  private final long renewEvery;
  private final long minSpacing;
  private long nextSeq;
  private long outstandingSeq = -1;
  private long outstandingSince;
  private long lastSent;
  private boolean sentAny;
  private boolean again;
  private boolean answered;
  private long answeredEpoch;

  /** When each recent renewal was sent: a grant's lease counts from there. */
  private final Map<Long, Long> sentAt =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
          return size() > 16;
        }
      };

  LeaseRenewals(PermitPool pool, long renewEveryNanos, long minSpacingNanos) {
    this.pool = pool;
    this.renewEvery = renewEveryNanos;
    this.minSpacing = minSpacingNanos;
  }

  PermitPool pool() {
    return pool;
  }

  /** The periodic renewal, unless one is on its way and not overdue. */
  Optional<Renewal> periodic(long now) {
    if (onItsWay(now)) {
      return Optional.empty();
    }
    return Optional.of(send(now));
  }

  /**
   * The pool asked to be heard: a renewal now, or empty with {@link #spacingLeft} nanoseconds to
   * wait (0: one is on its way, and another follows its answer).
   */
  Optional<Renewal> soon(long now) {
    if (onItsWay(now)) {
      again = true;
      return Optional.empty();
    }
    if (spacingLeft(now) > 0) {
      return Optional.empty();
    }
    return Optional.of(send(now));
  }

  /** How long until an early renewal may go: early renewals are at least minSpacing apart. */
  long spacingLeft(long now) {
    if (!sentAny || onItsWay(now)) {
      return 0;
    }
    return Math.max(0, minSpacing - (now - lastSent));
  }

  /** Applies a grant to the pool; true when the pool asked to be heard again meanwhile. */
  boolean granted(BudgetKeeper.Grant grant) {
    boolean reply = grant.replyTo() >= 0;
    Long sent = reply ? sentAt.remove(grant.replyTo()) : null;
    boolean latest = reply && grant.replyTo() == nextSeq - 1;
    boolean mayGrow =
        latest || (!reply && outstandingSeq < 0 && answered && grant.epoch() == answeredEpoch);
    pool.apply(grant, sent == null ? -1 : sent, mayGrow);
    if (latest) {
      answered = true;
      answeredEpoch = grant.epoch();
    }
    if (reply && grant.replyTo() == outstandingSeq) {
      outstandingSeq = -1;
      boolean renewAgain = again;
      again = false;
      return renewAgain;
    }
    return false;
  }

  private boolean onItsWay(long now) {
    return outstandingSeq >= 0 && now - outstandingSince < renewEvery;
  }

  private Renewal send(long now) {
    long seq = nextSeq++;
    sentAt.put(seq, now);
    outstandingSeq = seq;
    outstandingSince = now;
    lastSent = now;
    sentAny = true;
    again = false;
    return new Renewal(seq, pool.report());
  }
}

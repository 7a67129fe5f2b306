package io.fencekeeper.item;

import io.fencekeeper.item.WorkItem.Claim;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.Invalid;
import io.fencekeeper.item.WorkItem.LeaseCommand;
import io.fencekeeper.item.WorkItem.LeaseGranted;
import io.fencekeeper.item.WorkItem.LeaseHeld;
import io.fencekeeper.item.WorkItem.LeaseLost;
import io.fencekeeper.item.WorkItem.NotClaimable;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The lease rule (docs/design.md, "The work item"), whole: who may change an item, until when, and
 * with which fencing token. Pure functions of the item's state, a command and the time; the
 * entity's handlers ask them before they write anything and answer with what they decide.
 *
 * <ul>
 *   <li>A claim is granted when the item is open and nobody holds a live lease; the lease it ends,
 *       if any, was taken over, and an unreported one leaves the effect ambiguous.
 *   <li>A holder's command counts only with the current token, from the worker that holds it, and
 *       (all but MarkAmbiguous) while the lease is live. Anything else is stale.
 *   <li>A renewal never shortens a lease.
 *   <li>A node that was downed writes nothing more.
 * </ul>
 */
final class LeaseRules {

  private LeaseRules() {}

  /** Whether a command needs the lease to be live, or may come from a holder whose lease lapsed. */
  enum Need {
    LIVE,
    /** MarkAmbiguous: the one command a holder whose lease lapsed may still send (it is true). */
    MAY_HAVE_LAPSED
  }

  static boolean live(State item, Instant now) {
    return item.status() == Status.LEASED && now.isBefore(item.leaseExpiresAt());
  }

  /** The holder of the item's lease, live or lapsed; null when the item is not leased. */
  static String holder(State item) {
    return item.status() == Status.LEASED ? item.owner() : null;
  }

  /** Why the item cannot be claimed now, if it cannot: not open, or someone holds it. */
  static Optional<Reply> claimRefusal(State item, Instant now) {
    return switch (item.status()) {
      case DONE, FAILED, CLOSED ->
          Optional.of(new NotClaimable(item.status(), "item is " + item.status(), null));
      case QUARANTINED ->
          Optional.of(
              new NotClaimable(
                  Status.QUARANTINED, "item is QUARANTINED: " + item.lastError(), null));
      case LEASED ->
          live(item, now)
              ? Optional.of(new LeaseHeld(item.owner(), item.leaseExpiresAt(), item.token()))
              : Optional.empty();
      case PENDING ->
          item.retryAt() != null && now.isBefore(item.retryAt())
              ? Optional.of(
                  new NotClaimable(Status.PENDING, "backing off after a failure", item.retryAt()))
              : Optional.empty();
    };
  }

  /**
   * The lease a claim at {@code now} grants (once {@link #claimRefusal} found none live): the next
   * token and attempt, until {@code now} plus the lease asked for. The holder of a lease that
   * lapsed before it completed, failed or released the item is its previous owner: a takeover.
   */
  static LeaseGranted grant(State item, Claim cmd, Instant now) {
    return new LeaseGranted(
        cmd.workerId(),
        item.token() + 1,
        item.attempt() + 1,
        cmd.maxAttempts(),
        now.plus(cmd.lease()),
        holder(item),
        cmd.incarnation(),
        now,
        cmd.requestId());
  }

  /**
   * Whether {@code cmd} repeats the claim that was granted the item's current lease, live or
   * lapsed: the same worker with the same request id. Its worker never learnt of that lease (else
   * it would not ask again), so it did nothing with it: it gets that lease again, never a second
   * one.
   */
  static boolean repeatsCurrentClaim(State item, Claim cmd) {
    return cmd.requestId() != null
        && item.status() == Status.LEASED
        && cmd.requestId().equals(item.requestId())
        && cmd.workerId().equals(item.owner());
  }

  /**
   * The effect once the current lease ends, by a takeover or a close: a lease that ends without an
   * outcome from its holder leaves it AMBIGUOUS (reconciled before any new mutation); a recorded
   * effect stays recorded.
   */
  static EffectStatus effectAfterLeaseEnds(State item) {
    if (item.status() == Status.LEASED
        && !item.outcomeReported()
        && item.effect() == EffectStatus.NONE) {
      return EffectStatus.AMBIGUOUS;
    }
    return item.effect();
  }

  /**
   * Until when a cleanup sent under the item's key may still commit, once the current lease ends
   * and leaves the effect {@code after}: a holder gives every cleanup a deadline no later than its
   * own measure of its lease's end, which is never later than the item's expiry (docs/cluster.md,
   * "Whose clock decides a lease"), so an AMBIGUOUS effect is looked up only after the last such
   * expiry (plus the provider's clock-skew allowance, the worker's business). Unchanged when the
   * item is not leased or the effect is not AMBIGUOUS.
   */
  static Instant lookupAfterLeaseEnds(State item, EffectStatus after) {
    if (item.status() != Status.LEASED
        || after != EffectStatus.AMBIGUOUS
        || item.leaseExpiresAt() == null) {
      return item.lookupAfter();
    }
    Instant earlier = item.lookupAfter();
    return earlier != null && earlier.isAfter(item.leaseExpiresAt())
        ? earlier
        : item.leaseExpiresAt();
  }

  /**
   * Why a holder's command may not change the item, if it may not. Invariant "stale changes
   * nothing": only the current token of a leased item counts, only from the worker that holds it,
   * and unless {@code need} allows a lapsed lease, only while the lease is live.
   */
  static Optional<String> staleReason(State item, LeaseCommand cmd, Instant now, Need need) {
    if (cmd.token() != item.token()) {
      return Optional.of("token " + cmd.token() + " is not the current token " + item.token());
    }
    if (item.status() != Status.LEASED) {
      return Optional.of("item is " + item.status() + ", not leased");
    }
    if (!item.owner().equals(cmd.workerId())) {
      return Optional.of("token " + cmd.token() + " is not held by worker " + cmd.workerId());
    }
    if (need == Need.LIVE && !live(item, now)) {
      return Optional.of("lease expired at " + item.leaseExpiresAt());
    }
    return Optional.empty();
  }

  /** The holder of the current lease speaking after that lease lapsed (paused, or cut off). */
  static boolean lapsedHolder(State item, LeaseCommand cmd, Instant now) {
    return item.status() == Status.LEASED
        && cmd.token() == item.token()
        && cmd.workerId().equals(item.owner())
        && !live(item, now);
  }

  /** Until when a renewal at {@code now} holds the lease: never shorter than it already was. */
  static Instant renewedUntil(State item, Instant now, Duration lease) {
    Instant proposed = now.plus(lease);
    return proposed.isAfter(item.leaseExpiresAt()) ? proposed : item.leaseExpiresAt();
  }

  /**
   * Whether the claim that {@code workerId} gave up waiting for was granted to it and not used: it
   * never learnt its token, so the lease can go back at once.
   */
  static boolean grantedUnused(State item, String workerId) {
    return item.status() == Status.LEASED
        && item.owner().equals(workerId)
        && !item.outcomeReported();
  }

  /**
   * A node that was downed (by the split-brain resolver on either side of a partition, or by an
   * operator) writes nothing more. The others start its shards once their removal margin has
   * passed, but its own shard region stops only in a late phase of its coordinated shutdown, and
   * attempts still running here would go on claiming and committing meanwhile: two live
   * incarnations of one item, the partition inequality's window stretched by however slow the
   * shutdown is. A holder's commands are answered LeaseLost and a claim NotClaimable, nothing
   * journaled, as if the node had died a moment earlier; the coordinator's and an operator's
   * commands are not answered at all, so their callers ask again and reach the item's new host.
   */
  static final String NODE_DOWNED =
      "this item's node was downed: its shard moves to a live node, and nothing is written here";

  /** When a claim refused by a downed node may be tried again: by then its shard has moved. */
  static final Duration DOWNED_RETRY = Duration.ofSeconds(1);

  /** A claim on a downed node: refused, nothing journaled, to be tried again once it has moved. */
  static NotClaimable claimOnDownedNode(State item, Instant now) {
    return new NotClaimable(item.status(), NODE_DOWNED, now.plus(DOWNED_RETRY));
  }

  /** A holder's command on a downed node: lost, as if the node had died a moment earlier. */
  static LeaseLost leaseOnDownedNode(State item, LeaseCommand cmd) {
    return new LeaseLost(cmd.token(), item.token(), NODE_DOWNED, item.status());
  }

  /** What is wrong with a claim's own fields, if anything: worker, lease, attempt limit. */
  static Optional<Invalid> invalidClaim(Claim cmd, Duration maxLease) {
    return invalidWorker(cmd.workerId())
        .or(() -> invalidLease(cmd.lease(), maxLease))
        .or(
            () ->
                cmd.requestId() != null && !RequestId.valid(cmd.requestId())
                    ? Optional.of(new Invalid("requestId", "requestId must be " + RequestId.RULE))
                    : Optional.empty())
        .or(
            () ->
                cmd.maxAttempts() < 1 || cmd.maxAttempts() > 1000
                    ? Optional.of(
                        new Invalid("maxAttempts", "maxAttempts must be between 1 and 1000"))
                    : Optional.empty());
  }

  /** A worker id is journaled and shown as it is: no control characters (the API refuses more). */
  static Optional<Invalid> invalidWorker(String workerId) {
    return workerId == null
            || workerId.isBlank()
            || workerId.length() > 200
            || workerId.chars().anyMatch(Character::isISOControl)
        ? Optional.of(
            new Invalid("workerId", "workerId must be 1-200 characters, no control characters"))
        : Optional.empty();
  }

  static Optional<Invalid> invalidLease(Duration lease, Duration maxLease) {
    if (lease == null || lease.isNegative() || lease.isZero()) {
      return Optional.of(new Invalid("lease", "lease must be a positive duration"));
    }
    if (lease.compareTo(maxLease) > 0) {
      return Optional.of(new Invalid("lease", "lease must not exceed " + maxLease));
    }
    return Optional.empty();
  }
}

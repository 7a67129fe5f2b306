package io.fencekeeper.worker;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.WorkItem;
import java.time.Duration;
import java.time.Instant;

/**
 * How one attempt at an item ended, as the dispatcher needs to know it. It crosses the network when
 * the worker and the dispatcher live on different nodes, so the kind travels as a name, never as a
 * class name.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
  @JsonSubTypes.Type(value = AttemptResult.Done.class, name = "done"),
  @JsonSubTypes.Type(value = AttemptResult.Failed.class, name = "failed"),
  @JsonSubTypes.Type(value = AttemptResult.RetryAt.class, name = "retry-at"),
  @JsonSubTypes.Type(value = AttemptResult.Held.class, name = "held"),
  @JsonSubTypes.Type(value = AttemptResult.Lost.class, name = "lost"),
  @JsonSubTypes.Type(value = AttemptResult.Closed.class, name = "closed"),
  @JsonSubTypes.Type(value = AttemptResult.Quarantined.class, name = "quarantined"),
  @JsonSubTypes.Type(value = AttemptResult.Abandoned.class, name = "abandoned"),
  @JsonSubTypes.Type(value = AttemptResult.Unanswered.class, name = "unanswered")
})
public sealed interface AttemptResult extends CborSerializable
    permits AttemptResult.Done,
        AttemptResult.Failed,
        AttemptResult.RetryAt,
        AttemptResult.Held,
        AttemptResult.Lost,
        AttemptResult.Closed,
        AttemptResult.Quarantined,
        AttemptResult.Abandoned,
        AttemptResult.Unanswered {

  /**
   * How long an item kept apart from its node's flight waits before it is handed out again
   * (docs/design.md, "Lost together, kept apart").
   */
  Duration KEPT_APART_WAIT = Duration.ofMillis(100);

  /**
   * How an attempt ends whose claim was refused: someone holds the lease, the item is kept apart
   * from its loss cohort in flight on the node (handed out again a moment later), or the item is
   * not claimable (DONE, FAILED, CLOSED, QUARANTINED, or PENDING until a back-off ends). The one
   * mapping for the worker loop and the lease API's claim-next. Any other answer is not a refusal:
   * {@link Abandoned}, with the answer named.
   */
  static AttemptResult ofClaimAnswer(WorkItem.Reply reply, Instant now) {
    if (reply instanceof WorkItem.LeaseHeld held) {
      return new Held(held.leaseExpiresAt());
    }
    if (reply instanceof WorkItem.KeptApart) {
      // its cohort's item in flight here is likely done within a provider call or two
      return new RetryAt(now.plus(KEPT_APART_WAIT));
    }
    if (reply instanceof WorkItem.NotClaimable nc) {
      return switch (nc.status()) {
        case DONE -> new Done();
        case FAILED -> new Failed(nc.reason() != null ? nc.reason() : "item already FAILED");
        case CLOSED -> new Closed();
        case QUARANTINED -> new Quarantined(nc.reason());
        default -> new RetryAt(nc.retryAt() != null ? nc.retryAt() : now);
      };
    }
    return new Abandoned("claim answered " + reply);
  }

  /**
   * The item is DONE. Whether it took over a lease or reconciled an effect is in the item's
   * journal, where the run's counters are read from (docs/design.md, "Observability").
   */
  record Done() implements AttemptResult {}

  /** The item is FAILED: permanent error or attempts used up. */
  record Failed(String error) implements AttemptResult {}

  /** The item is PENDING again and may be claimed from {@code at}. */
  record RetryAt(Instant at) implements AttemptResult {}

  /** Someone else holds a live lease until {@code until}. */
  record Held(Instant until) implements AttemptResult {}

  /** This attempt lost its lease (stale token): a newer holder owns the item. */
  record Lost(String reason) implements AttemptResult {}

  /** The item was closed by the coordinator (deadline or cancel). */
  record Closed() implements AttemptResult {}

  /** The item is QUARANTINED (its last holders vanished): out of work until an operator retry. */
  record Quarantined(String reason) implements AttemptResult {}

  /** No answer from the item (timeout, journal failure): nothing is known, wait for the lease. */
  record Abandoned(String reason) implements AttemptResult {}

  /**
   * The claim was not answered in time: the item's node is dead, cut off or overloaded. Nothing was
   * done; the worker told the item to give the lease back if it was granted after all.
   */
  record Unanswered(String reason) implements AttemptResult {}
}

package io.fencekeeper.item;

import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Instant;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandlerBuilder;

/**
 * How each event changes an item's state: the entity's event handler, and the fold {@link
 * WorkItem#replay} makes without an entity. Pure functions of the state and the event; each copies
 * the state, sets only the fields it changes and returns the new state. The mutable copy (an
 * instance of this class) never leaves the transition that made it.
 */
final class StateChange {
  private Status status;
  private String owner;
  private long token;
  private Instant leaseExpiresAt;
  private int attempt;
  private int maxAttempts;
  private EffectStatus effect;
  private EffectOutcome effectOutcome;
  private boolean outcomeReported;
  private String lastError;
  private String closedReason;
  private Instant retryAt;
  private AttemptBudget budget;
  private long ownerIncarnation;
  private Instant lookupAfter;

  static EventHandler<State, WorkItem.Event> eventHandler() {
    return EventHandlerBuilder.<State, WorkItem.Event>builder()
        .forAnyState()
        .onEvent(WorkItem.LeaseGranted.class, StateChange::leaseGranted)
        .onEvent(WorkItem.LeaseRenewed.class, StateChange::leaseRenewed)
        .onEvent(WorkItem.EffectRecorded.class, StateChange::effectRecorded)
        .onEvent(WorkItem.MarkedAmbiguous.class, StateChange::markedAmbiguous)
        .onEvent(WorkItem.ItemCompleted.class, StateChange::completed)
        .onEvent(WorkItem.AttemptFailed.class, StateChange::attemptFailed)
        .onEvent(WorkItem.LeaseReleased.class, StateChange::released)
        .onEvent(WorkItem.ItemClosed.class, StateChange::closed)
        .onEvent(WorkItem.ItemReopened.class, (item, e) -> startedOver(item))
        .onEvent(WorkItem.RetryRequested.class, (item, e) -> startedOver(item))
        .onEvent(WorkItem.ItemQuarantined.class, StateChange::quarantined)
        .onEvent(WorkItem.AttemptsExhausted.class, StateChange::attemptsExhausted)
        .onEvent(WorkItem.LateHolderHeard.class, StateChange::lateHolderHeard)
        .onEvent(WorkItem.HolderNodeAlive.class, StateChange::holderNodeAlive)
        // invariant "stale changes nothing": a rejected stale command is audited and changes
        // nothing
        .onEvent(WorkItem.StaleCommandRejected.class, (item, e) -> item)
        .build();
  }

  static State leaseGranted(State item, WorkItem.LeaseGranted e) {
    StateChange next = new StateChange(item);
    next.status = Status.LEASED;
    next.owner = e.workerId();
    next.token = e.token();
    next.leaseExpiresAt = e.leaseExpiresAt();
    next.attempt = e.attempt();
    next.maxAttempts = e.maxAttempts();
    next.effect = LeaseRules.effectAfterLeaseEnds(item);
    next.lookupAfter = LeaseRules.lookupAfterLeaseEnds(item, next.effect);
    next.outcomeReported = false;
    next.closedReason = null;
    next.retryAt = null;
    next.budget = item.budgetAfterLeaseEnds();
    next.ownerIncarnation = e.holderIncarnation();
    return next.state();
  }

  static State leaseRenewed(State item, WorkItem.LeaseRenewed e) {
    StateChange next = new StateChange(item);
    next.leaseExpiresAt = e.leaseExpiresAt();
    return next.state();
  }

  static State effectRecorded(State item, WorkItem.EffectRecorded e) {
    return reported(item, EffectStatus.RECORDED, e.outcome(), item.lastError());
  }

  /** A recorded effect stays recorded (invariant "one effect record"): never to be sent again. */
  static State markedAmbiguous(State item, WorkItem.MarkedAmbiguous e) {
    EffectStatus next =
        item.effect() == EffectStatus.RECORDED ? item.effect() : EffectStatus.AMBIGUOUS;
    return reported(item, next, item.effectOutcome(), e.reason());
  }

  static State completed(State item, WorkItem.ItemCompleted e) {
    State recorded =
        e.outcome() == null
            ? item
            : reported(item, EffectStatus.RECORDED, e.outcome(), item.lastError());
    StateChange next = new StateChange(recorded);
    next.status = Status.DONE;
    next.outcomeReported = true;
    next.closedReason = null;
    next.retryAt = null;
    return next.state();
  }

  static State attemptFailed(State item, WorkItem.AttemptFailed e) {
    StateChange next =
        unheld(
            item, e.exhausted() ? Status.FAILED : Status.PENDING, item.budget().holderReported());
    next.lastError = e.error();
    next.retryAt = e.retryAt();
    next.lookupAfter = LeaseRules.lookupAfterLeaseEnds(item, item.effect());
    return next.state();
  }

  static State released(State item, WorkItem.LeaseReleased e) {
    StateChange next = unheld(item, Status.PENDING, item.budget().holderReported());
    next.lookupAfter = LeaseRules.lookupAfterLeaseEnds(item, item.effect());
    return next.state();
  }

  static State closed(State item, WorkItem.ItemClosed e) {
    StateChange next = unheld(item, Status.CLOSED, item.budgetAfterLeaseEnds());
    next.token = e.newToken();
    next.effect = LeaseRules.effectAfterLeaseEnds(item);
    next.lookupAfter = LeaseRules.lookupAfterLeaseEnds(item, next.effect);
    next.closedReason = e.reason();
    return next.state();
  }

  static State quarantined(State item, WorkItem.ItemQuarantined e) {
    return refusedAtClaim(item, Status.QUARANTINED, e.newToken(), e.reason());
  }

  static State attemptsExhausted(State item, WorkItem.AttemptsExhausted e) {
    return refusedAtClaim(item, Status.FAILED, e.newToken(), e.reason());
  }

  /**
   * A holder spoke after its lease lapsed: the current one is then not lost when its lease ends;
   * one already counted lost is lost no more, and a quarantine that no longer holds is lifted.
   */
  static State lateHolderHeard(State item, WorkItem.LateHolderHeard e) {
    if (heldBy(item, e.workerId(), e.token())) {
      return withBudget(item, item.budget().heardLate(e.token()));
    }
    AttemptBudget after = item.budget().returned(e.workerId(), e.token()).orElse(item.budget());
    if (e.quarantineLifted() && item.status() == Status.QUARANTINED) {
      StateChange next = unheld(item, Status.PENDING, after);
      next.lastError = Quarantine.liftReason(e.workerId(), e.token());
      return next.state();
    }
    return withBudget(item, after);
  }

  /** The claim that ends the current lease found its holder's node alive: not a loss. */
  static State holderNodeAlive(State item, WorkItem.HolderNodeAlive e) {
    return heldBy(item, e.workerId(), e.token())
        ? withBudget(item, item.budget().heardLate(e.token()))
        : item;
  }

  /**
   * Back to PENDING by an operator (Reopen, Retry): the effect and the last error stay for the next
   * claim, and the item gets a new budget of attempts.
   */
  static State startedOver(State item) {
    return unheld(item, Status.PENDING, AttemptBudget.startingAfter(item.attempt())).state();
  }

  /** Whether {@code workerId} holds the lease of {@code token}, live or lapsed. */
  private static boolean heldBy(State item, String workerId, long token) {
    return item.status() == Status.LEASED && item.token() == token && workerId.equals(item.owner());
  }

  private static State withBudget(State item, AttemptBudget nextBudget) {
    StateChange next = new StateChange(item);
    next.budget = nextBudget;
    return next.state();
  }

  /** A claim found the holders lost: any lapsed lease ends, fenced off, with its holder lost. */
  private static State refusedAtClaim(State item, Status status, long newToken, String reason) {
    StateChange next = unheld(item, status, item.budgetAfterLeaseEnds());
    next.token = newToken;
    next.effect = LeaseRules.effectAfterLeaseEnds(item);
    next.lookupAfter = LeaseRules.lookupAfterLeaseEnds(item, next.effect);
    next.lastError = reason;
    return next.state();
  }

  /** The holder told us what happened: the effect as it now stands. */
  private static State reported(
      State item, EffectStatus nextEffect, EffectOutcome outcome, String error) {
    StateChange next = new StateChange(item);
    next.effect = nextEffect;
    next.effectOutcome = outcome;
    next.outcomeReported = true;
    next.lastError = error;
    next.budget = item.budget().holderReported();
    return next.state();
  }

  /**
   * No holder any more: failed, released, reopened, closed or quarantined. The token, the effect
   * and the last error stay unless the caller changes them; a close or retry time is not kept.
   */
  private static StateChange unheld(State item, Status status, AttemptBudget nextBudget) {
    StateChange next = new StateChange(item);
    next.status = status;
    next.owner = null;
    next.leaseExpiresAt = null;
    next.outcomeReported = true;
    next.closedReason = null;
    next.retryAt = null;
    next.budget = nextBudget;
    next.ownerIncarnation = 0;
    return next;
  }

  private StateChange(State from) {
    status = from.status();
    owner = from.owner();
    token = from.token();
    leaseExpiresAt = from.leaseExpiresAt();
    attempt = from.attempt();
    maxAttempts = from.maxAttempts();
    effect = from.effect();
    effectOutcome = from.effectOutcome();
    outcomeReported = from.outcomeReported();
    lastError = from.lastError();
    closedReason = from.closedReason();
    retryAt = from.retryAt();
    budget = from.budget();
    ownerIncarnation = from.ownerIncarnation();
    lookupAfter = from.lookupAfter();
  }

  private State state() {
    return new State(
        status,
        owner,
        token,
        leaseExpiresAt,
        attempt,
        maxAttempts,
        effect,
        effectOutcome,
        outcomeReported,
        lastError,
        closedReason,
        retryAt,
        budget,
        ownerIncarnation,
        lookupAfter);
  }
}

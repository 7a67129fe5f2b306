package io.fencekeeper.item;

import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Instant;

/**
 * A copy of a state to change: each transition sets only the fields it changes. Mutable, and never
 * outside the transition that made it.
 */
final class StateChange {
  Status status;
  String owner;
  long token;
  Instant leaseExpiresAt;
  int attempt;
  int maxAttempts;
  EffectStatus effect;
  EffectOutcome effectOutcome;
  boolean outcomeReported;
  String lastError;
  String closedReason;
  Instant retryAt;
  AttemptBudget budget;
  long ownerIncarnation;

  StateChange(State from) {
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
  }

  State state() {
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
        ownerIncarnation);
  }
}

package io.fencekeeper.item;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fencekeeper.CborSerializable;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.Passivate;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReplyBuilder;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;

/**
 * One unit of cleanup as a sharded, event-sourced entity: the single authority on who holds the
 * lease of an item, until when, and with which fencing token (docs/design.md, "The work item").
 *
 * <p>Every command that mutates carries the fencing token of the claim it belongs to. A command
 * with a token that is not current, or whose lease has run out, is answered {@link LeaseLost} and
 * the rejection itself is journaled, so the audit trail shows the attempts that lost as well.
 */
public final class WorkItem
    extends EventSourcedBehaviorWithEnforcedReplies<
        WorkItem.Command, WorkItem.Event, WorkItem.State> {

  public static final EntityTypeKey<Command> ENTITY_TYPE_KEY =
      EntityTypeKey.create(Command.class, "WorkItem");

  /**
   * The cluster role of the nodes that host item shards: nodes with workers, and a node alone
   * (docs/design.md, "Dispatch on every node"). A node without it reaches items through a proxy.
   */
  public static final String HOST_ROLE = "items";

  /**
   * Registers the entity with Cluster Sharding on this node, with the shard extractor of {@code
   * shards} (the one shard function: staging and the dispatchers use it too), on the members with
   * the {@link #HOST_ROLE} role.
   */
  public static void init(
      ActorSystem<?> system,
      Clock clock,
      ItemSettings settings,
      ItemShards shards,
      ExternalWorkers words) {
    BooleanSupplier downed = NodeStanding.downed(system);
    HolderNodes holderNodes = HolderNodes.of(system);
    ClusterSharding.get(system)
        .init(
            Entity.of(
                    ENTITY_TYPE_KEY,
                    context ->
                        Behaviors.setup(
                            actor -> {
                              // a named logger: otherwise Pekko walks the stack to find one, per
                              // entity
                              actor.setLoggerName(WorkItem.class);
                              return new WorkItem(
                                  ItemId.parse(context.getEntityId()),
                                  clock,
                                  settings,
                                  () -> context.getShard().tell(new Passivate<>(actor.getSelf())),
                                  downed,
                                  holderNodes,
                                  words);
                            }))
                .withMessageExtractor(shards.extractor())
                .withRole(HOST_ROLE));
  }

  public static Behavior<Command> create(ItemId itemId, Clock clock, ItemSettings settings) {
    return create(itemId, clock, settings, () -> false);
  }

  /** {@code downed}: whether this item's node was downed (it then writes nothing more). */
  static Behavior<Command> create(
      ItemId itemId, Clock clock, ItemSettings settings, BooleanSupplier downed) {
    return new WorkItem(
        itemId, clock, settings, () -> {}, downed, HolderNodes.UNKNOWN, ExternalWorkers.NONE);
  }

  /** {@code holderNodes}: which lease holders' nodes are alive (the cluster's view, in a node). */
  static Behavior<Command> create(
      ItemId itemId, Clock clock, ItemSettings settings, HolderNodes holderNodes) {
    return new WorkItem(
        itemId, clock, settings, () -> {}, () -> false, holderNodes, ExternalWorkers.NONE);
  }

  /** {@code words}: the last words of the lease API's workers (docs/design.md, "Lost holders"). */
  static Behavior<Command> create(
      ItemId itemId, Clock clock, ItemSettings settings, ExternalWorkers words) {
    return new WorkItem(itemId, clock, settings, () -> {}, () -> false, HolderNodes.UNKNOWN, words);
  }

  public static PersistenceId persistenceId(ItemId itemId) {
    return PersistenceId.of(ENTITY_TYPE_KEY.name(), itemId.value());
  }

  /**
   * The item its events make, without an entity: the fold the entity recovers with (its own event
   * handler, from the initial state). The archive reads the items of a run it is about to prune
   * this way, rather than waking each entity on a journal that is about to be deleted.
   */
  public static ItemView replay(ItemId itemId, List<Event> events) {
    EventHandler<State, Event> handler = StateChange.eventHandler();
    State state = State.initial();
    for (Event event : events) {
      state = handler.apply(state, event);
    }
    return ItemView.of(itemId.value(), itemId.idempotencyKey(), state);
  }

  private final ItemCommands commands;
  private final BooleanSupplier downed;

  /**
   * {@code passivate} asks the shard to stop this entity once it is DONE. A DONE item is final;
   * kept until the idle timeout it only holds heap (a fast run would keep every item it finished in
   * the last 15 s), and a later command simply recovers it from the journal.
   */
  private WorkItem(
      ItemId itemId,
      Clock clock,
      ItemSettings settings,
      Runnable passivate,
      BooleanSupplier downed,
      HolderNodes holderNodes,
      ExternalWorkers words) {
    super(persistenceId(itemId));
    // the id as a string once per incarnation: every reply carries it and its key
    this.commands =
        new ItemCommands(
            Effect(), persistenceId().entityId(), clock, settings, passivate, holderNodes, words);
    this.downed = downed;
  }

  // ---------------------------------------------------------------------------------------------
  // Protocol

  public enum Status {
    PENDING,
    LEASED,
    DONE,
    FAILED,
    CLOSED,
    /**
     * Its last holders all vanished while they held it (a poison item): out of work until an
     * operator retries it.
     */
    QUARANTINED
  }

  /** What the next holder knows about the cleanup at the provider. */
  public enum EffectStatus {
    /** Nobody has reported sending the mutation. */
    NONE,
    /** The effect is recorded: never send it to the provider again. */
    RECORDED,
    /** It may or may not have happened: reconcile with lookup before any new apply. */
    AMBIGUOUS
  }

  /** How the recorded effect came about. */
  public enum OutcomeKind {
    /** The provider applied the cleanup for this item's idempotency key. */
    APPLIED,
    /** Reconciliation found the effect already at the provider. */
    FOUND_BY_LOOKUP,
    /** The plan said there was nothing to clean up. */
    NOTHING_TO_DO
  }

  public record EffectOutcome(OutcomeKind kind, String providerReference, String detail)
      implements CborSerializable {}

  public sealed interface Command extends CborSerializable
      permits Claim, ClaimAbandoned, LeaseCommand, Close, Reopen, Retry, Get {}

  /**
   * Takes the lease; {@code maxAttempts} is the run's limit, remembered by the item. {@code
   * incarnation}: the cluster uid of the worker's node when the worker is one of the claiming
   * node's own ({@code {node address}/w{n}}), else 0 (a worker of the lease API): it tells later
   * whether the holder's node is still alive (docs/design.md, "Lost holders count"). {@code
   * keepApart}: the loss cohorts the claiming node must not take a second item of ("Lost together,
   * kept apart"); an item in one of them answers {@link KeptApart} and nothing is journaled. {@code
   * requestId}: the client's name for this claim (the lease API's, else null): the same worker
   * repeating it while the lease it was granted is the item's current one gets that lease again,
   * not a second one (docs/external-workers.md, "A claim that can be retried").
   */
  public record Claim(
      String workerId,
      Duration lease,
      int maxAttempts,
      long incarnation,
      KeepApart keepApart,
      String requestId,
      ActorRef<Reply> replyTo)
      implements Command {

    public Claim {
      // a claim from a node of an earlier version keeps nothing apart
      keepApart = keepApart == null ? KeepApart.NOTHING : keepApart;
    }

    /** A claim without a request id: not retryable (a node's own workers abandon instead). */
    public Claim(
        String workerId,
        Duration lease,
        int maxAttempts,
        long incarnation,
        KeepApart keepApart,
        ActorRef<Reply> replyTo) {
      this(workerId, lease, maxAttempts, incarnation, keepApart, null, replyTo);
    }

    /** A claim that keeps nothing apart (docs/design.md, "Lost together, kept apart"). */
    public Claim(
        String workerId,
        Duration lease,
        int maxAttempts,
        long incarnation,
        ActorRef<Reply> replyTo) {
      this(workerId, lease, maxAttempts, incarnation, KeepApart.NOTHING, null, replyTo);
    }
  }

  /**
   * The commands of a lease holder name it: a command counts only from the worker that holds the
   * current token, so one worker cannot complete, fail or release another's lease.
   */
  public sealed interface LeaseCommand extends Command
      permits Renew, RecordEffect, MarkAmbiguous, Complete, RecordEffectAndComplete, Fail, Release {
    String workerId();

    long token();

    ActorRef<Reply> replyTo();
  }

  public record Renew(String workerId, long token, Duration lease, ActorRef<Reply> replyTo)
      implements LeaseCommand {}

  public record RecordEffect(
      String workerId, long token, EffectOutcome outcome, ActorRef<Reply> replyTo)
      implements LeaseCommand {}

  public record MarkAmbiguous(String workerId, long token, String reason, ActorRef<Reply> replyTo)
      implements LeaseCommand {}

  public record Complete(String workerId, long token, ActorRef<Reply> replyTo)
      implements LeaseCommand {}

  /**
   * RecordEffect and Complete in one round trip, as the worker's last step: one {@link
   * ItemCompleted} event carries the effect, so an item's happy path is two journal rows (claim,
   * completion) and the audit still shows the effect and its provider reference. {@code throttles}:
   * throttled answers the attempt met.
   */
  public record RecordEffectAndComplete(
      String workerId, long token, EffectOutcome outcome, int throttles, ActorRef<Reply> replyTo)
      implements LeaseCommand {

    public RecordEffectAndComplete(
        String workerId, long token, EffectOutcome outcome, ActorRef<Reply> replyTo) {
      this(workerId, token, outcome, 0, replyTo);
    }
  }

  /** {@code throttles}: throttled answers the attempt met (for the run's counters). */
  public record Fail(
      String workerId,
      long token,
      String error,
      boolean retryable,
      Duration retryAfter,
      int throttles,
      ActorRef<Reply> replyTo)
      implements LeaseCommand {

    public Fail(
        String workerId,
        long token,
        String error,
        boolean retryable,
        Duration retryAfter,
        ActorRef<Reply> replyTo) {
      this(workerId, token, error, retryable, retryAfter, 0, replyTo);
    }
  }

  public record Release(String workerId, long token, ActorRef<Reply> replyTo)
      implements LeaseCommand {}

  /**
   * The worker gave up waiting for the answer to its claim (the item's node did not answer in
   * time). If the claim was granted after all, the lease goes back at once instead of blocking the
   * item for a whole lease: the worker never learnt its token, so it did nothing with it.
   */
  public record ClaimAbandoned(String workerId, ActorRef<Reply> replyTo) implements Command {}

  /** From the coordinator: deadline or cancel. Bumps the token to fence off in-flight workers. */
  public record Close(String reason, ActorRef<Reply> replyTo) implements Command {}

  /** From the coordinator on resume: CLOSED or FAILED back to PENDING. */
  public record Reopen(ActorRef<Reply> replyTo) implements Command {}

  /** Manual retry of a FAILED or QUARANTINED item. */
  public record Retry(ActorRef<Reply> replyTo) implements Command {}

  public record Get(ActorRef<Reply> replyTo) implements Command {}

  /** Every answer of the entity; rejections are answers, not exceptions. */
  public sealed interface Reply extends CborSerializable
      permits Claimed,
          Accepted,
          AlreadyRecorded,
          LeaseLost,
          LeaseHeld,
          NotClaimable,
          KeptApart,
          Invalid {}

  /**
   * The lease was granted. {@code effect} tells the holder what it must do first. {@code cohorts}:
   * the loss cohorts the item is in (the nodes of the holders it lost in a row, the one this claim
   * took over from included), which its holder's node now has in flight (docs/design.md, "Lost
   * together, kept apart"). {@code lookupAfter}, with an AMBIGUOUS effect: the end of the last
   * lease under which a cleanup may have been sent (the item's clock). Every such cleanup had a
   * deadline no later than it, so the holder looks the key up only after it plus the provider's
   * clock-skew allowance (docs/provider-protocol.md, "The deadline"); null otherwise, or when not
   * known (a host of an earlier version). {@code answeredAt}: the item's clock when it granted the
   * lease, or answered a claim's retry with it again (null from a node of an earlier version);
   * {@code requestId}: the claim's request id, if it had one.
   */
  public record Claimed(
      String itemId,
      long token,
      Instant leaseExpiresAt,
      int attempt,
      EffectStatus effect,
      String idempotencyKey,
      boolean takeover,
      ItemView item,
      Set<String> cohorts,
      @JsonInclude(JsonInclude.Include.NON_NULL) Instant lookupAfter,
      Instant answeredAt,
      String requestId)
      implements Reply {

    public Claimed {
      cohorts = cohorts == null ? Set.of() : Set.copyOf(cohorts);
    }

    /**
     * Without a lookup bound (the effect is not AMBIGUOUS, or the bound is not known), an answer
     * time or a request id.
     */
    public Claimed(
        String itemId,
        long token,
        Instant leaseExpiresAt,
        int attempt,
        EffectStatus effect,
        String idempotencyKey,
        boolean takeover,
        ItemView item,
        Set<String> cohorts) {
      this(
          itemId,
          token,
          leaseExpiresAt,
          attempt,
          effect,
          idempotencyKey,
          takeover,
          item,
          cohorts,
          null,
          null,
          null);
    }
  }

  /** The command took effect (or was already in effect); the item as it is now. */
  public record Accepted(ItemView item) implements Reply {}

  /**
   * The effect is recorded already, so nothing was written (invariant "one effect record"): a
   * holder that repeats its own record after a lost answer finishes the item; anyone else has
   * nothing to do.
   */
  public record AlreadyRecorded(ItemView item) implements Reply {}

  /**
   * A stale token or an expired lease: the caller must stop, it no longer owns the item. {@code
   * status}: the item's status now (null from a node of an earlier version): DONE, FAILED or
   * PENDING with {@code currentToken == presentedToken} is the caller's own lease having ended the
   * attempt already (a command repeated after a lost answer), not a lease lost to someone else.
   */
  public record LeaseLost(long presentedToken, long currentToken, String reason, Status status)
      implements Reply {

    public LeaseLost(long presentedToken, long currentToken, String reason) {
      this(presentedToken, currentToken, reason, null);
    }
  }

  /** Claim refused: someone else holds a live lease. */
  public record LeaseHeld(String owner, Instant leaseExpiresAt, long currentToken)
      implements Reply {}

  /** Claim refused: the item is not open for work (done, failed, closed or backing off). */
  public record NotClaimable(Status status, String reason, Instant retryAt) implements Reply {}

  /**
   * Claim refused, nothing journaled: the item is in a loss cohort ({@code cohorts}) the claim had
   * to keep apart from, since its node has an item of it in flight or another of its claims may be
   * taking one (docs/design.md, "Lost together, kept apart"). Claimable as soon as that is over.
   */
  public record KeptApart(Set<String> cohorts) implements Reply {}

  /** The command was malformed or not allowed in this state; nothing changed. */
  public record Invalid(String field, String message) implements Reply {}

  // ---------------------------------------------------------------------------------------------
  // Events: the audit trail of every attempt

  public sealed interface Event extends CborSerializable
      permits LeaseGranted,
          LeaseRenewed,
          EffectRecorded,
          MarkedAmbiguous,
          ItemCompleted,
          AttemptFailed,
          LeaseReleased,
          ItemClosed,
          ItemReopened,
          RetryRequested,
          ItemQuarantined,
          AttemptsExhausted,
          StaleCommandRejected,
          LateHolderHeard,
          HolderNodeAlive,
          HolderSpokeElsewhere {
    Instant at();
  }

  /**
   * A claim. {@code previousOwner} is set when the previous holder's lease expired before it
   * completed, failed or released the item: a takeover. If that holder had not reported an outcome
   * the effect becomes AMBIGUOUS (see {@link LeaseRules#effectAfterLeaseEnds}). {@code
   * holderIncarnation}: the cluster uid of the new holder's node, 0 when not known (a lease API
   * worker, or a journal written before it was kept). {@code requestId}: the claim's request id
   * (the lease API's retryable claims; null for a node's own workers and in events journaled before
   * claims had one): a retry of that claim by the same worker is answered this lease again.
   */
  public record LeaseGranted(
      String workerId,
      long token,
      int attempt,
      int maxAttempts,
      Instant leaseExpiresAt,
      String previousOwner,
      long holderIncarnation,
      Instant at,
      String requestId)
      implements Event {

    public LeaseGranted(
        String workerId,
        long token,
        int attempt,
        int maxAttempts,
        Instant leaseExpiresAt,
        String previousOwner,
        long holderIncarnation,
        Instant at) {
      this(
          workerId,
          token,
          attempt,
          maxAttempts,
          leaseExpiresAt,
          previousOwner,
          holderIncarnation,
          at,
          null);
    }
  }

  public record LeaseRenewed(long token, Instant leaseExpiresAt, Instant at) implements Event {}

  /**
   * The effect is recorded (the lease API's two-step path: a Complete follows). {@code reconciled}:
   * the effect had been AMBIGUOUS, so this record resolved it.
   */
  public record EffectRecorded(long token, EffectOutcome outcome, boolean reconciled, Instant at)
      implements Event {}

  public record MarkedAmbiguous(long token, String reason, Instant at) implements Event {}

  /**
   * DONE. The worker's last step records the effect and completes in this one event ({@code
   * outcome} set, one journal row); after a separate {@link EffectRecorded} (the lease API's
   * Complete, and journals written before) {@code outcome} is null. {@code reconciled}: this
   * attempt resolved an AMBIGUOUS effect; {@code throttles}: throttled answers it met.
   */
  public record ItemCompleted(
      long token, EffectOutcome outcome, boolean reconciled, int throttles, Instant at)
      implements Event {}

  /** {@code throttles}: throttled answers the attempt met before it gave the item back. */
  public record AttemptFailed(
      long token,
      String error,
      boolean retryable,
      boolean exhausted,
      Instant retryAt,
      int throttles,
      Instant at)
      implements Event {}

  /**
   * The holder gave the lease back ({@code Release}), or the worker that asked for it never learnt
   * of it ({@code unused}: its claim was abandoned unanswered): an unused lease says nothing about
   * its holder, so it neither counts as a loss nor breaks the run of losses before it (a lost claim
   * answer must not erase a poison item's losses). False in events journaled before it was kept,
   * which broke the run as a release does.
   */
  public record LeaseReleased(long token, Instant at, boolean unused) implements Event {

    public LeaseReleased(long token, Instant at) {
      this(token, at, false);
    }
  }

  /**
   * {@code newToken} is one past the last claim's; {@code abandonedOwner} held a lease, live or
   * lapsed.
   */
  public record ItemClosed(long newToken, String reason, String abandonedOwner, Instant at)
      implements Event {}

  public record ItemReopened(Status from, Instant at) implements Event {}

  public record RetryRequested(Instant at) implements Event {}

  /**
   * The claim that would have started the next attempt found that the last holders of the item all
   * vanished while they held it ({@code lostOwners}, oldest first), or that one lease more than
   * that in a row ended in silence ({@code lostOwners} then names all their holders, those that
   * spoke later too): the item is kept out of work until an operator retries it. {@code newToken}
   * fences off the last of them, as a close does. {@code previousOwner}: the holder whose lapsed
   * lease this ends, if the item was leased (its attempt ends here, which the run's attempt counter
   * reads).
   */
  public record ItemQuarantined(
      long newToken, String reason, List<String> lostOwners, String previousOwner, Instant at)
      implements Event {}

  /**
   * The claim that would have started attempt {@code maxAttempts + 1}: the item is FAILED instead.
   * {@code previousOwners}: the holders of its counted attempts that vanished, oldest first; {@code
   * previousOwner}: the holder whose lapsed lease this ends, if the item was leased.
   */
  public record AttemptsExhausted(
      long newToken, String reason, List<String> previousOwners, String previousOwner, Instant at)
      implements Event {}

  /**
   * A command that lost: journaled for the audit, changes nothing else (invariant "stale changes
   * nothing").
   */
  public record StaleCommandRejected(
      String command,
      String workerId,
      long presentedToken,
      long currentToken,
      String reason,
      Instant at)
      implements Event {}

  /**
   * The holder of a lease that has lapsed ({@code workerId}, {@code token}) sent a command after
   * all (journaled just before, as a stale rejection): it is alive, paused or cut off, not killed
   * by the item, so its lease's silent end is not a loss (docs/design.md, "Lost holders count"). It
   * may come before the lease is taken over or after. {@code quarantineLifted}: the item was
   * QUARANTINED and without this loss the quarantine no longer holds: it is PENDING again.
   */
  public record LateHolderHeard(String workerId, long token, boolean quarantineLifted, Instant at)
      implements Event {}

  /**
   * The claim that takes over the lapsed lease of {@code workerId} ({@code token}), which ended
   * without a word from it, found that holder's node (the incarnation it claimed from) still an Up
   * member that every member reaches: the item did not kill it, so its lease's silent end is not a
   * loss (docs/design.md, "Lost holders count"). Journaled just before the claim's own event, which
   * is what the membership read decided.
   */
  public record HolderNodeAlive(String workerId, long token, Instant at) implements Event {}

  /**
   * The claim found that a lost holder of the lease API ({@code workerId}, lease {@code token}) has
   * spoken, on any item, after that lease ended ({@code spokeAt}, by the clock of the node that
   * heard it; item/ExternalWorkers keeps the last word of each, cluster-wide): the worker is alive,
   * so the item did not kill it and its lease's silent end is not a loss (docs/design.md, "Lost
   * holders count"). Journaled before the claim's own event, as {@link HolderNodeAlive} is.
   */
  public record HolderSpokeElsewhere(String workerId, long token, Instant spokeAt, Instant at)
      implements Event {}

  // ---------------------------------------------------------------------------------------------
  // State

  /**
   * The item's state, rebuilt from the journal. {@code outcomeReported} says whether the current
   * lease's holder has told us what happened; a lease that ends without it is ambiguous, and its
   * holder counts as lost in the {@code budget} unless it spoke after its lease lapsed.
   */
  public record State(
      Status status,
      String owner,
      long token,
      Instant leaseExpiresAt,
      int attempt,
      int maxAttempts,
      EffectStatus effect,
      EffectOutcome effectOutcome,
      boolean outcomeReported,
      String lastError,
      String closedReason,
      Instant retryAt,
      AttemptBudget budget,
      long ownerIncarnation,
      // left out when null, so a snapshot without it is the same bytes as before it existed
      @JsonInclude(JsonInclude.Include.NON_NULL) Instant lookupAfter,
      String requestId,
      boolean tookOver)
      implements CborSerializable {

    public State {
      // a snapshot taken before budgets existed counts every attempt since the item was created
      budget = budget == null ? AttemptBudget.startingAfter(0) : budget;
    }

    static State initial() {
      return new State(
          Status.PENDING,
          null,
          0,
          null,
          0,
          0,
          EffectStatus.NONE,
          null,
          true,
          null,
          null,
          null,
          AttemptBudget.startingAfter(0),
          0,
          null,
          null,
          false);
    }

    /** The holder of a lease that ended (expired, or is ending now) without an outcome from it. */
    Optional<String> silentHolder() {
      return status == Status.LEASED && !outcomeReported ? Optional.of(owner) : Optional.empty();
    }

    /** The budget once the current lease ends: a silent holder is a lost one. */
    AttemptBudget budgetAfterLeaseEnds() {
      return silentHolder()
          .map(holder -> budget.silentEnd(holder, token, leaseExpiresAt))
          .orElse(budget);
    }

    /** The transitions are {@link StateChange}'s: OlderJournalEventsTest calls these three. */
    State onLeaseGranted(LeaseGranted e) {
      return StateChange.leaseGranted(this, e);
    }

    State onEffectRecorded(EffectRecorded e) {
      return StateChange.effectRecorded(this, e);
    }

    State onCompleted(ItemCompleted e) {
      return StateChange.completed(this, e);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Command handlers

  /**
   * A snapshot every 100 events, two kept, events never deleted (they are the audit): an item's
   * journal is a few events per attempt, but a flood of rejected stale commands must not make its
   * recovery slow.
   */
  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(SNAPSHOT_EVERY, 2);
  }

  static final int SNAPSHOT_EVERY = 100;

  @Override
  public Set<String> tagsFor(Event event) {
    return ItemSignals.isSignal(event) ? ItemSignals.TAGS : Set.of();
  }

  @Override
  public State emptyState() {
    return State.initial();
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    CommandHandlerWithReplyBuilder<Command, Event, State> builder =
        newCommandHandlerWithReplyBuilder();
    builder
        .forAnyState()
        .onCommand(Claim.class, unlessDowned(commands::claim, commands::claimOnDownedNode))
        .onCommand(Renew.class, unlessDowned(commands::renew, commands::leaseOnDownedNode))
        .onCommand(
            RecordEffect.class, unlessDowned(commands::recordEffect, commands::leaseOnDownedNode))
        .onCommand(
            MarkAmbiguous.class, unlessDowned(commands::markAmbiguous, commands::leaseOnDownedNode))
        .onCommand(Complete.class, unlessDowned(commands::complete, commands::leaseOnDownedNode))
        .onCommand(
            RecordEffectAndComplete.class,
            unlessDowned(commands::recordEffectAndComplete, commands::leaseOnDownedNode))
        .onCommand(Fail.class, unlessDowned(commands::fail, commands::leaseOnDownedNode))
        .onCommand(Release.class, unlessDowned(commands::release, commands::leaseOnDownedNode))
        .onCommand(
            ClaimAbandoned.class, unlessDowned(commands::claimAbandoned, commands::unanswered))
        .onCommand(Close.class, unlessDowned(commands::close, commands::unanswered))
        .onCommand(Reopen.class, unlessDowned(commands::reopen, commands::unanswered))
        .onCommand(Retry.class, unlessDowned(commands::retry, commands::unanswered))
        .onCommand(Get.class, commands::get);
    return builder.build();
  }

  /** A downed node writes nothing ({@link LeaseRules#NODE_DOWNED} says why). */
  private <C extends Command> BiFunction<State, C, ReplyEffect<Event, State>> unlessDowned(
      BiFunction<State, C, ReplyEffect<Event, State>> handler,
      BiFunction<State, C, ReplyEffect<Event, State>> refused) {
    return (state, cmd) ->
        downed.getAsBoolean() ? refused.apply(state, cmd) : handler.apply(state, cmd);
  }

  static String truncate(String text) {
    if (text == null) {
      return null;
    }
    return text.length() <= 1000 ? text : text.substring(0, 1000);
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return StateChange.eventHandler();
  }
}

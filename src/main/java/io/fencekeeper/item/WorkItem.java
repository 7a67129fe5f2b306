package io.fencekeeper.item;

import io.fencekeeper.CborSerializable;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
      ActorSystem<?> system, Clock clock, Settings settings, ItemShards shards) {
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
                                  holderNodes);
                            }))
                .withMessageExtractor(shards.extractor())
                .withRole(HOST_ROLE));
  }

  public static Behavior<Command> create(ItemId itemId, Clock clock, Settings settings) {
    return create(itemId, clock, settings, () -> false);
  }

  /** {@code downed}: whether this item's node was downed (it then writes nothing more). */
  static Behavior<Command> create(
      ItemId itemId, Clock clock, Settings settings, BooleanSupplier downed) {
    return new WorkItem(itemId, clock, settings, () -> {}, downed, HolderNodes.UNKNOWN);
  }

  /** {@code holderNodes}: which lease holders' nodes are alive (the cluster's view, in a node). */
  static Behavior<Command> create(
      ItemId itemId, Clock clock, Settings settings, HolderNodes holderNodes) {
    return new WorkItem(itemId, clock, settings, () -> {}, () -> false, holderNodes);
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
    EventHandler<State, Event> handler =
        new WorkItem(
                itemId,
                Clock.systemUTC(),
                Settings.defaults(),
                () -> {},
                () -> false,
                HolderNodes.UNKNOWN)
            .eventHandler();
    State state = State.initial();
    for (Event event : events) {
      state = handler.apply(state, event);
    }
    return ItemView.of(itemId.value(), itemId.idempotencyKey(), state);
  }

  /**
   * Limits that protect the entity from absurd requests, and how many holders in a row may vanish
   * before the item is quarantined ({@code fencekeeper.item.quarantine-after-losses}; 0: never).
   */
  public record Settings(Duration maxLease, int quarantineAfterLosses) {
    public Settings {
      if (quarantineAfterLosses < 0 || quarantineAfterLosses > 1000) {
        throw new IllegalArgumentException(
            "quarantine-after-losses must be between 0 and 1000, got " + quarantineAfterLosses);
      }
    }

    public static Settings defaults() {
      return new Settings(Duration.ofHours(1), 2);
    }
  }

  private final ItemId itemId;
  // the id as a string and its key, once per incarnation: every reply carries both
  private final String itemValue;
  private final String idempotencyKey;
  private final Clock clock;
  private final Settings settings;

  /**
   * Asks the shard to stop this entity once it is DONE. A DONE item is final; kept until the idle
   * timeout it only holds heap (a fast run would keep every item it finished in the last 15 s), and
   * a later command simply recovers it from the journal.
   */
  private final Runnable passivate;

  private final BooleanSupplier downed;
  private final HolderNodes holderNodes;

  private WorkItem(
      ItemId itemId,
      Clock clock,
      Settings settings,
      Runnable passivate,
      BooleanSupplier downed,
      HolderNodes holderNodes) {
    super(persistenceId(itemId));
    this.itemId = itemId;
    this.itemValue = persistenceId().entityId();
    this.idempotencyKey = ItemId.idempotencyKeyOf(itemValue);
    this.clock = clock;
    this.settings = settings;
    this.passivate = passivate;
    this.downed = downed;
    this.holderNodes = holderNodes;
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
   * whether the holder's node is still alive (docs/design.md, "Lost holders count").
   */
  public record Claim(
      String workerId, Duration lease, int maxAttempts, long incarnation, ActorRef<Reply> replyTo)
      implements Command {}

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
      permits Claimed, Accepted, AlreadyRecorded, LeaseLost, LeaseHeld, NotClaimable, Invalid {}

  /** The lease was granted. {@code effect} tells the holder what it must do first. */
  public record Claimed(
      String itemId,
      long token,
      Instant leaseExpiresAt,
      int attempt,
      EffectStatus effect,
      String idempotencyKey,
      boolean takeover,
      ItemView item)
      implements Reply {}

  /** The command took effect (or was already in effect); the item as it is now. */
  public record Accepted(ItemView item) implements Reply {}

  /**
   * The effect is recorded already, so nothing was written (invariant "one effect record"): a
   * holder that repeats its own record after a lost answer finishes the item; anyone else has
   * nothing to do.
   */
  public record AlreadyRecorded(ItemView item) implements Reply {}

  /** A stale token or an expired lease: the caller must stop, it no longer owns the item. */
  public record LeaseLost(long presentedToken, long currentToken, String reason) implements Reply {}

  /** Claim refused: someone else holds a live lease. */
  public record LeaseHeld(String owner, Instant leaseExpiresAt, long currentToken)
      implements Reply {}

  /** Claim refused: the item is not open for work (done, failed, closed or backing off). */
  public record NotClaimable(Status status, String reason, Instant retryAt) implements Reply {}

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
          HolderNodeAlive {
    Instant at();
  }

  /**
   * A claim. {@code previousOwner} is set when the previous holder's lease expired before it
   * completed, failed or released the item: a takeover. If that holder had not reported an outcome
   * the effect becomes AMBIGUOUS (see {@link State#effectAfterLeaseEnds}). {@code
   * holderIncarnation}: the cluster uid of the new holder's node, 0 when not known (a lease API
   * worker, or a journal written before it was kept).
   */
  public record LeaseGranted(
      String workerId,
      long token,
      int attempt,
      int maxAttempts,
      Instant leaseExpiresAt,
      String previousOwner,
      long holderIncarnation,
      Instant at)
      implements Event {}

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

  public record LeaseReleased(long token, Instant at) implements Event {}

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

  // ---------------------------------------------------------------------------------------------
  // State

  /**
   * One lease of the current run of leases that ended without an outcome from their holders. {@code
   * heard}: its holder has sent a command since its lease lapsed, so it was alive (paused, cut
   * off), not a node the item killed.
   */
  public record SilentEnd(String holder, long token, boolean heard) implements CborSerializable {}

  /**
   * The attempts that count against {@code maxAttempts} and towards quarantine: those since the
   * item was created, or since an operator last let it start over (Retry, Reopen).
   *
   * @param startedAfter the attempt number when this budget began
   * @param lostHolders the holders of those attempts that vanished (their lease ended without an
   *     outcome from them: taken over after expiry, or closed while they were silent) and have not
   *     been heard from since, oldest first
   * @param consecutiveLosses how many leases of the run in {@code silentRun} ended with a lost
   *     holder (one not heard from)
   * @param silentRun the latest leases in a row that ended without an outcome from their holders,
   *     oldest first (a snapshot from before it was kept: rebuilt from the lost holders)
   * @param heardLate the token of the last lease whose holder spoke after it lapsed, else 0 (the
   *     holder of the lease of that token is not lost when it ends)
   */
  public record AttemptBudget(
      int startedAfter,
      List<String> lostHolders,
      int consecutiveLosses,
      List<SilentEnd> silentRun,
      long heardLate)
      implements CborSerializable {

    public AttemptBudget {
      lostHolders = lostHolders == null ? List.of() : List.copyOf(lostHolders);
      if (silentRun == null) {
        List<SilentEnd> rebuilt = new ArrayList<>();
        for (String holder :
            lostHolders.subList(lostHolders.size() - consecutiveLosses, lostHolders.size())) {
          rebuilt.add(new SilentEnd(holder, -1, false));
        }
        silentRun = rebuilt;
      }
      silentRun = List.copyOf(silentRun);
      consecutiveLosses = (int) silentRun.stream().filter(end -> !end.heard()).count();
    }

    static AttemptBudget startingAfter(int attempt) {
      return new AttemptBudget(attempt, List.of(), 0, List.of(), 0);
    }

    /** Attempts started in this budget when the item has started {@code attempt} in all. */
    int used(int attempt) {
      return attempt - startedAfter;
    }

    /** The lease of {@code token} ended without an outcome from {@code owner}. */
    AttemptBudget silentEnd(String owner, long token) {
      boolean heard = heardLate == token;
      List<String> lost = new ArrayList<>(lostHolders);
      if (!heard) {
        lost.add(owner);
      }
      List<SilentEnd> run = new ArrayList<>(silentRun);
      run.add(new SilentEnd(owner, token, heard));
      return new AttemptBudget(startedAfter, lost, 0, run, 0);
    }

    /** The holder said what happened (an effect, ambiguity, a failure, a release): it was there. */
    AttemptBudget holderReported() {
      return silentRun.isEmpty()
          ? this
          : new AttemptBudget(startedAfter, lostHolders, 0, List.of(), heardLate);
    }

    /** The holder of the current lease, {@code token}, spoke after its lease lapsed. */
    AttemptBudget heardLate(long token) {
      return new AttemptBudget(startedAfter, lostHolders, 0, silentRun, token);
    }

    /**
     * The budget once {@code worker}, lost with the lease of {@code token}, has spoken again: it
     * was not killed, so it is no longer a lost holder; its lease still ended in silence and stays
     * in the run. Empty when it is not a lost holder of the run (heard already, or before a holder
     * that reported).
     */
    Optional<AttemptBudget> returned(String worker, long token) {
      for (int i = silentRun.size() - 1; i >= 0; i--) {
        SilentEnd end = silentRun.get(i);
        if (!end.heard() && end.token() == token && end.holder().equals(worker)) {
          List<SilentEnd> run = new ArrayList<>(silentRun);
          run.set(i, new SilentEnd(worker, token, true));
          List<String> lost = new ArrayList<>(lostHolders);
          lost.remove(lost.lastIndexOf(worker));
          return Optional.of(new AttemptBudget(startedAfter, lost, 0, run, heardLate));
        }
      }
      return Optional.empty();
    }

    /**
     * "Lost holders count" (docs/design.md): {@code k} holders in a row lost and not heard from
     * since (a poison item that kills its node: K deaths), or {@code k + 1} leases in a row ended
     * in silence, whoever spoke afterwards (a poison item that stalls its node before it kills it:
     * its holders may speak before they die, so they cannot all be forgiven; K + 1 deaths). Pause
     * then kill ends two leases in silence, one of them with a holder that wakes: neither.
     */
    boolean quarantines(int k) {
      return k > 0 && (consecutiveLosses >= k || silentRun.size() >= k + 1);
    }

    /** The holders lost in the run (not heard from since), oldest first. */
    List<String> consecutivelyLost() {
      return silentRun.stream().filter(end -> !end.heard()).map(SilentEnd::holder).toList();
    }

    /** The holders of every lease in the run, oldest first. */
    List<String> silentHolders() {
      return silentRun.stream().map(SilentEnd::holder).toList();
    }
  }

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
      long ownerIncarnation)
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
          0);
    }

    boolean leaseLiveAt(Instant now) {
      return status == Status.LEASED && now.isBefore(leaseExpiresAt);
    }

    /** The holder of a lease that ended (expired, or is ending now) without an outcome from it. */
    Optional<String> silentHolder() {
      return status == Status.LEASED && !outcomeReported ? Optional.of(owner) : Optional.empty();
    }

    /** The budget once the current lease ends: a silent holder is a lost one. */
    AttemptBudget budgetAfterLeaseEnds() {
      return silentHolder().map(holder -> budget.silentEnd(holder, token)).orElse(budget);
    }

    /** The effect after the current lease ends: unreported leases leave it ambiguous. */
    EffectStatus effectAfterLeaseEnds() {
      if (status == Status.LEASED && !outcomeReported && effect == EffectStatus.NONE) {
        return EffectStatus.AMBIGUOUS;
      }
      return effect;
    }

    State onLeaseGranted(LeaseGranted e) {
      return new State(
          Status.LEASED,
          e.workerId(),
          e.token(),
          e.leaseExpiresAt(),
          e.attempt(),
          e.maxAttempts(),
          effectAfterLeaseEnds(),
          effectOutcome,
          false,
          lastError,
          null,
          null,
          budgetAfterLeaseEnds(),
          e.holderIncarnation());
    }

    State onLeaseRenewed(LeaseRenewed e) {
      return new State(
          status,
          owner,
          token,
          e.leaseExpiresAt(),
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

    State onEffectRecorded(EffectRecorded e) {
      return reported(EffectStatus.RECORDED, e.outcome(), lastError);
    }

    State onMarkedAmbiguous(MarkedAmbiguous e) {
      EffectStatus next = effect == EffectStatus.RECORDED ? effect : EffectStatus.AMBIGUOUS;
      return reported(next, effectOutcome, e.reason());
    }

    State onCompleted(ItemCompleted e) {
      State recorded =
          e.outcome() == null ? this : reported(EffectStatus.RECORDED, e.outcome(), lastError);
      return recorded.done();
    }

    private State done() {
      return new State(
          Status.DONE,
          owner,
          token,
          leaseExpiresAt,
          attempt,
          maxAttempts,
          effect,
          effectOutcome,
          true,
          lastError,
          null,
          null,
          budget,
          ownerIncarnation);
    }

    State onAttemptFailed(AttemptFailed e) {
      return unheld(
          e.exhausted() ? Status.FAILED : Status.PENDING,
          token,
          effect,
          e.error(),
          null,
          e.retryAt(),
          budget.holderReported());
    }

    State onReleased(LeaseReleased e) {
      return unheld(Status.PENDING, token, effect, lastError, null, null, budget.holderReported());
    }

    State onClosed(ItemClosed e) {
      return unheld(
          Status.CLOSED,
          e.newToken(),
          effectAfterLeaseEnds(),
          lastError,
          e.reason(),
          null,
          budgetAfterLeaseEnds());
    }

    State onQuarantined(ItemQuarantined e) {
      return refusedAtClaim(Status.QUARANTINED, e.newToken(), e.reason());
    }

    State onAttemptsExhausted(AttemptsExhausted e) {
      return refusedAtClaim(Status.FAILED, e.newToken(), e.reason());
    }

    /**
     * A holder spoke after its lease lapsed: the current one is then not lost when its lease ends;
     * one already counted lost is lost no more, and a quarantine that no longer holds is lifted.
     */
    State onLateHolderHeard(LateHolderHeard e) {
      if (status == Status.LEASED && token == e.token() && e.workerId().equals(owner)) {
        return withBudget(budget.heardLate(e.token()));
      }
      AttemptBudget after = budget.returned(e.workerId(), e.token()).orElse(budget);
      if (e.quarantineLifted() && status == Status.QUARANTINED) {
        String why =
            "quarantine lifted: "
                + e.workerId()
                + " (token "
                + e.token()
                + ") came back, so it was not lost";
        return unheld(Status.PENDING, token, effect, why, null, null, after);
      }
      return withBudget(after);
    }

    /** The claim that ends the current lease found its holder's node alive: not a loss. */
    State onHolderNodeAlive(HolderNodeAlive e) {
      if (status == Status.LEASED && token == e.token() && e.workerId().equals(owner)) {
        return withBudget(budget.heardLate(e.token()));
      }
      return this;
    }

    private State withBudget(AttemptBudget next) {
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
          next,
          ownerIncarnation);
    }

    /** A claim found the holders lost: any lapsed lease ends, fenced off, with its holder lost. */
    private State refusedAtClaim(Status next, long newToken, String reason) {
      return unheld(
          next, newToken, effectAfterLeaseEnds(), reason, null, null, budgetAfterLeaseEnds());
    }

    /**
     * Back to PENDING by an operator (Reopen, Retry): the effect and the last error stay for the
     * next claim, and the item gets a new budget of attempts.
     */
    State startedOver() {
      return unheld(
          Status.PENDING,
          token,
          effect,
          lastError,
          null,
          null,
          AttemptBudget.startingAfter(attempt));
    }

    /** The holder told us what happened: the effect as it now stands. */
    private State reported(EffectStatus nextEffect, EffectOutcome outcome, String error) {
      return new State(
          status,
          owner,
          token,
          leaseExpiresAt,
          attempt,
          maxAttempts,
          nextEffect,
          outcome,
          true,
          error,
          closedReason,
          retryAt,
          budget.holderReported(),
          ownerIncarnation);
    }

    /** No holder any more: failed, released, reopened, closed or quarantined. */
    private State unheld(
        Status next,
        long nextToken,
        EffectStatus nextEffect,
        String error,
        String closed,
        Instant retry,
        AttemptBudget nextBudget) {
      return new State(
          next,
          null,
          nextToken,
          null,
          attempt,
          maxAttempts,
          nextEffect,
          effectOutcome,
          true,
          error,
          closed,
          retry,
          nextBudget,
          0);
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

  /**
   * The tag of the events a run's counters are made of (docs/design.md, "Observability"): stale
   * rejections, takeovers, attempts that ended without a clean completion, and completions that
   * reconciled or met throttling. A clean completion is not tagged, so the happy path writes no tag
   * row. The run of an event is in its persistence id.
   */
  public static final String SIGNAL_TAG = "item-signal";

  @Override
  public Set<String> tagsFor(Event event) {
    return isSignal(event) ? SIGNAL_TAGS : Set.of();
  }

  private static final Set<String> SIGNAL_TAGS = Set.of(SIGNAL_TAG);

  static boolean isSignal(Event event) {
    if (event instanceof LeaseGranted granted) {
      return granted.previousOwner() != null;
    }
    if (event instanceof ItemCompleted completed) {
      return completed.reconciled() || completed.throttles() > 0;
    }
    if (event instanceof EffectRecorded recorded) {
      return recorded.reconciled();
    }
    if (event instanceof ItemClosed closed) {
      return closed.abandonedOwner() != null;
    }
    return event instanceof StaleCommandRejected
        || event instanceof AttemptFailed
        || event instanceof LeaseReleased
        || event instanceof ItemQuarantined
        || event instanceof AttemptsExhausted;
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
        .onCommand(Claim.class, unlessDowned(this::onClaim, this::claimOnDownedNode))
        .onCommand(Renew.class, unlessDowned(this::onRenew, this::leaseOnDownedNode))
        .onCommand(RecordEffect.class, unlessDowned(this::onRecordEffect, this::leaseOnDownedNode))
        .onCommand(
            MarkAmbiguous.class, unlessDowned(this::onMarkAmbiguous, this::leaseOnDownedNode))
        .onCommand(Complete.class, unlessDowned(this::onComplete, this::leaseOnDownedNode))
        .onCommand(
            RecordEffectAndComplete.class,
            unlessDowned(this::onRecordEffectAndComplete, this::leaseOnDownedNode))
        .onCommand(Fail.class, unlessDowned(this::onFail, this::leaseOnDownedNode))
        .onCommand(Release.class, unlessDowned(this::onRelease, this::leaseOnDownedNode))
        .onCommand(ClaimAbandoned.class, unlessDowned(this::onClaimAbandoned, this::unanswered))
        .onCommand(Close.class, unlessDowned(this::onClose, this::unanswered))
        .onCommand(Reopen.class, unlessDowned(this::onReopen, this::unanswered))
        .onCommand(Retry.class, unlessDowned(this::onRetry, this::unanswered))
        .onCommand(Get.class, (state, cmd) -> Effect().reply(cmd.replyTo(), accepted(state)));
    return builder.build();
  }

  // --- a downed node writes nothing -------------------------------------------------------------

  /** When a claim refused by a downed node may be tried again: by then its shard has moved. */
  static final Duration DOWNED_RETRY = Duration.ofSeconds(1);

  static final String NODE_DOWNED =
      "this item's node was downed: its shard moves to a live node, and nothing is written here";

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
  private <C extends Command> BiFunction<State, C, ReplyEffect<Event, State>> unlessDowned(
      BiFunction<State, C, ReplyEffect<Event, State>> handler,
      BiFunction<State, C, ReplyEffect<Event, State>> refused) {
    return (state, cmd) ->
        downed.getAsBoolean() ? refused.apply(state, cmd) : handler.apply(state, cmd);
  }

  private ReplyEffect<Event, State> claimOnDownedNode(State state, Claim cmd) {
    Instant later = clock.instant().plus(DOWNED_RETRY);
    return Effect().reply(cmd.replyTo(), new NotClaimable(state.status(), NODE_DOWNED, later));
  }

  private ReplyEffect<Event, State> leaseOnDownedNode(State state, LeaseCommand cmd) {
    return Effect().reply(cmd.replyTo(), new LeaseLost(cmd.token(), state.token(), NODE_DOWNED));
  }

  private ReplyEffect<Event, State> unanswered(State state, Command cmd) {
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onClaim(State state, Claim cmd) {
    Optional<Invalid> bad =
        requireWorker(cmd.workerId())
            .or(() -> requireLease(cmd.lease()))
            .or(
                () ->
                    cmd.maxAttempts() < 1 || cmd.maxAttempts() > 1000
                        ? Optional.of(
                            new Invalid("maxAttempts", "maxAttempts must be between 1 and 1000"))
                        : Optional.empty());
    if (bad.isPresent()) {
      return Effect().reply(cmd.replyTo(), bad.get());
    }
    Instant now = clock.instant();
    Optional<Reply> refusal = claimRefusal(state, now);
    if (refusal.isPresent()) {
      return Effect().reply(cmd.replyTo(), refusal.get());
    }
    // the membership read is journaled before what it decided, so a replay decides the same
    Optional<HolderNodeAlive> alive = holderNodeAlive(state, now);
    State judged = alive.map(state::onHolderNodeAlive).orElse(state);
    List<Event> read = alive.<List<Event>>map(List::of).orElse(List.of());
    Optional<ReplyEffect<Event, State>> notGranted = holdersLost(judged, cmd, read, now);
    if (notGranted.isPresent()) {
      return notGranted.get();
    }
    // a lease that expired before its holder completed, failed or released the item is a
    // takeover; whether that leaves the effect ambiguous is the state's business (an unreported
    // lease does, a recorded effect stays recorded)
    String previousOwner = leaseHolder(state);
    LeaseGranted granted =
        new LeaseGranted(
            cmd.workerId(),
            state.token() + 1,
            state.attempt() + 1,
            cmd.maxAttempts(),
            now.plus(cmd.lease()),
            previousOwner,
            cmd.incarnation(),
            now);
    return Effect()
        .persist(with(read, granted))
        .thenReply(
            cmd.replyTo(),
            s ->
                new Claimed(
                    itemValue,
                    s.token(),
                    s.leaseExpiresAt(),
                    s.attempt(),
                    s.effect(),
                    idempotencyKey,
                    previousOwner != null,
                    view(s)));
  }

  /**
   * The claim that would start the next attempt counts the holders that vanished, the one whose
   * lease it would take over included: the last {@code quarantineAfterLosses} all lost makes the
   * item QUARANTINED (a poison item must not go from node to node until every node has crashed),
   * and a next attempt past {@code maxAttempts} makes it FAILED. Either is journaled with the lost
   * holders and answered NotClaimable.
   */
  private Optional<ReplyEffect<Event, State>> holdersLost(
      State state, Claim cmd, List<Event> read, Instant now) {
    AttemptBudget budget = state.budgetAfterLeaseEnds();
    int k = settings.quarantineAfterLosses();
    if (budget.quarantines(k)) {
      int inARow = budget.consecutiveLosses();
      List<String> lost = inARow >= k ? budget.consecutivelyLost() : budget.silentHolders();
      String reason =
          truncate(
              (inARow >= k
                      ? "holder lost " + inARow + " times in a row ("
                      : budget.silentRun().size()
                          + " leases in a row ended without a word from their holders, "
                          + (budget.silentRun().size() - inARow)
                          + " of whom were found alive or spoke later (")
                  + String.join(", ", lost)
                  + "); quarantined until an operator retries it");
      return Optional.of(
          Effect()
              .persist(
                  with(
                      read,
                      new ItemQuarantined(
                          state.token() + 1, reason, lost, leaseHolder(state), now)))
              .thenReply(cmd.replyTo(), s -> new NotClaimable(Status.QUARANTINED, reason, null)));
    }
    int used = budget.used(state.attempt());
    if (used >= cmd.maxAttempts()) {
      List<String> lost = budget.lostHolders();
      String reason =
          truncate(
              "holder lost "
                  + lost.size()
                  + " times"
                  + (lost.isEmpty() ? "" : " (" + String.join(", ", lost) + ")")
                  + "; attempts used up: "
                  + used
                  + " of "
                  + cmd.maxAttempts());
      return Optional.of(
          Effect()
              .persist(
                  with(
                      read,
                      new AttemptsExhausted(
                          state.token() + 1, reason, lost, leaseHolder(state), now)))
              .thenReply(cmd.replyTo(), s -> new NotClaimable(Status.FAILED, reason, null)));
    }
    return Optional.empty();
  }

  /** The holder of the item's lease, live or lapsed; null when the item is not leased. */
  private static String leaseHolder(State state) {
    return state.status() == Status.LEASED ? state.owner() : null;
  }

  /** Why the item cannot be claimed now, if it cannot: not open, or someone holds it. */
  private static Optional<Reply> claimRefusal(State state, Instant now) {
    return switch (state.status()) {
      case DONE, FAILED, CLOSED ->
          Optional.of(new NotClaimable(state.status(), "item is " + state.status(), null));
      case QUARANTINED ->
          Optional.of(
              new NotClaimable(
                  Status.QUARANTINED, "item is QUARANTINED: " + state.lastError(), null));
      case LEASED ->
          state.leaseLiveAt(now)
              ? Optional.of(new LeaseHeld(state.owner(), state.leaseExpiresAt(), state.token()))
              : Optional.empty();
      case PENDING ->
          state.retryAt() != null && now.isBefore(state.retryAt())
              ? Optional.of(
                  new NotClaimable(Status.PENDING, "backing off after a failure", state.retryAt()))
              : Optional.empty();
    };
  }

  private ReplyEffect<Event, State> onRenew(State state, Renew cmd) {
    Optional<Invalid> bad = requireLease(cmd.lease());
    if (bad.isPresent()) {
      return Effect().reply(cmd.replyTo(), bad.get());
    }
    Instant now = clock.instant();
    Optional<String> stale = staleReason(state, cmd, now, LeaseRule.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    // never shorten a lease: a late renewal must not cut the holder's time
    Instant proposed = now.plus(cmd.lease());
    Instant expiresAt =
        proposed.isAfter(state.leaseExpiresAt()) ? proposed : state.leaseExpiresAt();
    return Effect()
        .persist(new LeaseRenewed(cmd.token(), expiresAt, now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  private ReplyEffect<Event, State> onRecordEffect(State state, RecordEffect cmd) {
    return recordEffect(state, cmd, cmd.outcome(), false);
  }

  private ReplyEffect<Event, State> onRecordEffectAndComplete(
      State state, RecordEffectAndComplete cmd) {
    return recordEffect(state, cmd, cmd.outcome(), true);
  }

  /**
   * The effect record, alone or with the completion in the same write. invariant "one effect
   * record": at most one effect record per item, and only under a live lease with the current
   * token.
   */
  private ReplyEffect<Event, State> recordEffect(
      State state, LeaseCommand cmd, EffectOutcome outcome, boolean complete) {
    ActorRef<Reply> replyTo = cmd.replyTo();
    long token = cmd.token();
    if (outcome == null || outcome.kind() == null) {
      return Effect().reply(replyTo, new Invalid("outcome", "outcome with a kind is required"));
    }
    Instant now = clock.instant();
    Optional<String> stale = staleReason(state, cmd, now, LeaseRule.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    if (state.effect() == EffectStatus.RECORDED) {
      return Effect().reply(replyTo, new AlreadyRecorded(view(state)));
    }
    boolean reconciled = state.effect() == EffectStatus.AMBIGUOUS;
    if (!complete) {
      return Effect()
          .persist(new EffectRecorded(token, outcome, reconciled, now))
          .thenReply(replyTo, this::accepted);
    }
    int throttles = cmd instanceof RecordEffectAndComplete last ? last.throttles() : 0;
    // one event, one journal row: the effect and the completion together (the audit shows both)
    return Effect()
        .persist(new ItemCompleted(token, outcome, reconciled, throttles, now))
        .thenRun(done -> passivate.run())
        .thenReply(replyTo, this::accepted);
  }

  private ReplyEffect<Event, State> onMarkAmbiguous(State state, MarkAmbiguous cmd) {
    Instant now = clock.instant();
    // the one command a holder whose lease lapsed may still send: it tells the truth
    Optional<String> stale = staleReason(state, cmd, now, LeaseRule.MAY_HAVE_LAPSED);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    return Effect()
        .persist(new MarkedAmbiguous(cmd.token(), truncate(cmd.reason()), now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  private ReplyEffect<Event, State> onComplete(State state, Complete cmd) {
    Instant now = clock.instant();
    if (state.status() == Status.DONE
        && state.token() == cmd.token()
        && Objects.equals(cmd.workerId(), state.owner())) {
      // a holder repeating its own completion (lost response) gets the same answer
      return Effect().reply(cmd.replyTo(), accepted(state));
    }
    Optional<String> stale = staleReason(state, cmd, now, LeaseRule.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    if (state.effect() != EffectStatus.RECORDED) {
      return Effect()
          .reply(
              cmd.replyTo(),
              new Invalid(
                  "token",
                  "cannot complete: no effect is recorded (effect is " + state.effect() + ")"));
    }
    return Effect()
        .persist(new ItemCompleted(cmd.token(), null, false, 0, now))
        .thenRun(done -> passivate.run())
        .thenReply(cmd.replyTo(), this::accepted);
  }

  private ReplyEffect<Event, State> onFail(State state, Fail cmd) {
    if (cmd.retryAfter() != null && cmd.retryAfter().isNegative()) {
      return Effect()
          .reply(cmd.replyTo(), new Invalid("retryAfter", "retryAfter must not be negative"));
    }
    Instant now = clock.instant();
    // a lapsed lease cannot be failed clean: it ended without an outcome, so it stays ambiguous
    Optional<String> stale = staleReason(state, cmd, now, LeaseRule.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    boolean exhausted =
        !cmd.retryable() || state.budget().used(state.attempt()) >= state.maxAttempts();
    Instant retryAt =
        exhausted || cmd.retryAfter() == null || cmd.retryAfter().isZero()
            ? null
            : now.plus(cmd.retryAfter());
    return Effect()
        .persist(
            new AttemptFailed(
                cmd.token(),
                truncate(cmd.error()),
                cmd.retryable(),
                exhausted,
                retryAt,
                cmd.throttles(),
                now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  private ReplyEffect<Event, State> onRelease(State state, Release cmd) {
    Instant now = clock.instant();
    // nor released clean: only MarkAmbiguous is accepted after expiry
    Optional<String> stale = staleReason(state, cmd, now, LeaseRule.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    return Effect()
        .persist(new LeaseReleased(cmd.token(), now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  private ReplyEffect<Event, State> onClaimAbandoned(State state, ClaimAbandoned cmd) {
    boolean grantedToIt =
        state.status() == Status.LEASED
            && state.owner().equals(cmd.workerId())
            && !state.outcomeReported();
    if (!grantedToIt) {
      return Effect().reply(cmd.replyTo(), accepted(state));
    }
    return Effect()
        .persist(new LeaseReleased(state.token(), clock.instant()))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  private ReplyEffect<Event, State> onClose(State state, Close cmd) {
    if (state.status() == Status.DONE
        || state.status() == Status.CLOSED
        || state.status() == Status.QUARANTINED) {
      // DONE stays DONE; closing twice is the same close; a QUARANTINED item has no holder to
      // fence off and stays quarantined, so the run shows it until an operator retries it
      return Effect().reply(cmd.replyTo(), accepted(state));
    }
    Instant now = clock.instant();
    String abandonedOwner = leaseHolder(state);
    return Effect()
        .persist(
            new ItemClosed(
                state.token() + 1,
                cmd.reason() == null ? "closed" : truncate(cmd.reason()),
                abandonedOwner,
                now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  private ReplyEffect<Event, State> onReopen(State state, Reopen cmd) {
    if (state.status() != Status.CLOSED && state.status() != Status.FAILED) {
      return Effect().reply(cmd.replyTo(), accepted(state));
    }
    return Effect()
        .persist(new ItemReopened(state.status(), clock.instant()))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  private ReplyEffect<Event, State> onRetry(State state, Retry cmd) {
    if (state.status() != Status.FAILED && state.status() != Status.QUARANTINED) {
      return Effect()
          .reply(
              cmd.replyTo(),
              new Invalid(
                  "status",
                  "only a FAILED or QUARANTINED item can be retried; it is " + state.status()));
    }
    return Effect()
        .persist(new RetryRequested(clock.instant()))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  // ---------------------------------------------------------------------------------------------
  // Guards

  /** Whether a command needs the lease to be live, or may come from a holder whose lease lapsed. */
  private enum LeaseRule {
    LIVE,
    MAY_HAVE_LAPSED
  }

  /**
   * Why a holder's command may not change the item, if it may not. Invariant "stale changes
   * nothing": only the current token of a leased item counts, only from the worker that holds it,
   * and for all but MarkAmbiguous only while the lease is live.
   */
  private static Optional<String> staleReason(
      State state, LeaseCommand cmd, Instant now, LeaseRule rule) {
    if (cmd.token() != state.token()) {
      return Optional.of("token " + cmd.token() + " is not the current token " + state.token());
    }
    if (state.status() != Status.LEASED) {
      return Optional.of("item is " + state.status() + ", not leased");
    }
    if (!state.owner().equals(cmd.workerId())) {
      return Optional.of("token " + cmd.token() + " is not held by worker " + cmd.workerId());
    }
    if (rule == LeaseRule.LIVE && !state.leaseLiveAt(now)) {
      return Optional.of("lease expired at " + state.leaseExpiresAt());
    }
    return Optional.empty();
  }

  /**
   * Invariant "stale changes nothing": a command that lost is answered LeaseLost and audited (with
   * the worker, the token it presented and the one that was current), and changes nothing else.
   */
  /**
   * "Lost holders count": the silent holder of the lapsed lease this claim ends, if its node (the
   * incarnation it claimed from) is still an Up member that everyone reaches. A node the item
   * killed is unreachable or gone by the time its lease has lapsed; one that is alive was not
   * killed.
   */
  private Optional<HolderNodeAlive> holderNodeAlive(State state, Instant now) {
    return state
        .silentHolder()
        .filter(holder -> state.budget().heardLate() != state.token())
        // a holder whose node is not known (a lease API worker, an older journal) counts as lost
        .filter(holder -> state.ownerIncarnation() != 0)
        .filter(holder -> holderNodes.alive(holder, state.ownerIncarnation()))
        .map(holder -> new HolderNodeAlive(holder, state.token(), now));
  }

  private static List<Event> with(List<Event> first, Event last) {
    if (first.isEmpty()) {
      return List.of(last);
    }
    List<Event> all = new ArrayList<>(first);
    all.add(last);
    return all;
  }

  private ReplyEffect<Event, State> rejectStale(
      State state, LeaseCommand cmd, String reason, Instant now) {
    String command = cmd.getClass().getSimpleName();
    StaleCommandRejected rejected =
        new StaleCommandRejected(
            command, truncate(cmd.workerId()), cmd.token(), state.token(), reason, now);
    List<Event> events = new ArrayList<>(List.of(rejected));
    lateHolder(state, cmd, now).ifPresent(events::add);
    return Effect()
        .persist(events)
        .thenReply(cmd.replyTo(), s -> new LeaseLost(cmd.token(), state.token(), reason));
  }

  /**
   * "Lost holders count" tells poison from bad luck here: a holder that sends a command after its
   * lease lapsed was alive (paused past its lease, or cut off), so its node was not killed by the
   * item. Before its lease is taken over, its silent end will not be a loss; after, it is a loss no
   * more, and a QUARANTINED item whose quarantine no longer holds is PENDING again.
   */
  private Optional<Event> lateHolder(State state, LeaseCommand cmd, Instant now) {
    AttemptBudget budget = state.budget();
    if (state.status() == Status.LEASED
        && cmd.token() == state.token()
        && cmd.workerId().equals(state.owner())
        && !state.leaseLiveAt(now)) {
      return budget.heardLate() == cmd.token()
          ? Optional.empty()
          : Optional.of(new LateHolderHeard(state.owner(), cmd.token(), false, now));
    }
    return budget
        .returned(cmd.workerId(), cmd.token())
        .map(
            after ->
                new LateHolderHeard(
                    truncate(cmd.workerId()),
                    cmd.token(),
                    state.status() == Status.QUARANTINED
                        && !after.quarantines(settings.quarantineAfterLosses()),
                    now));
  }

  /** A worker id is journaled and shown as it is: no control characters (the API refuses more). */
  private static Optional<Invalid> requireWorker(String workerId) {
    return workerId == null
            || workerId.isBlank()
            || workerId.length() > 200
            || workerId.chars().anyMatch(Character::isISOControl)
        ? Optional.of(
            new Invalid("workerId", "workerId must be 1-200 characters, no control characters"))
        : Optional.empty();
  }

  private Optional<Invalid> requireLease(Duration lease) {
    if (lease == null || lease.isNegative() || lease.isZero()) {
      return Optional.of(new Invalid("lease", "lease must be a positive duration"));
    }
    if (lease.compareTo(settings.maxLease()) > 0) {
      return Optional.of(new Invalid("lease", "lease must not exceed " + settings.maxLease()));
    }
    return Optional.empty();
  }

  private Accepted accepted(State state) {
    return new Accepted(view(state));
  }

  private ItemView view(State s) {
    return ItemView.of(itemValue, idempotencyKey, s);
  }

  private static String truncate(String text) {
    if (text == null) {
      return null;
    }
    return text.length() <= 1000 ? text : text.substring(0, 1000);
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(LeaseGranted.class, State::onLeaseGranted)
        .onEvent(LeaseRenewed.class, State::onLeaseRenewed)
        .onEvent(EffectRecorded.class, State::onEffectRecorded)
        .onEvent(MarkedAmbiguous.class, State::onMarkedAmbiguous)
        .onEvent(ItemCompleted.class, State::onCompleted)
        .onEvent(AttemptFailed.class, State::onAttemptFailed)
        .onEvent(LeaseReleased.class, State::onReleased)
        .onEvent(ItemClosed.class, State::onClosed)
        .onEvent(ItemReopened.class, (state, e) -> state.startedOver())
        .onEvent(RetryRequested.class, (state, e) -> state.startedOver())
        .onEvent(ItemQuarantined.class, State::onQuarantined)
        .onEvent(AttemptsExhausted.class, State::onAttemptsExhausted)
        .onEvent(LateHolderHeard.class, State::onLateHolderHeard)
        .onEvent(HolderNodeAlive.class, State::onHolderNodeAlive)
        // invariant "stale changes nothing": a rejected stale command is audited and changes
        // nothing
        .onEvent(StaleCommandRejected.class, (state, e) -> state)
        .build();
  }
}

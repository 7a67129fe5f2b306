package io.fencekeeper.item;

import io.fencekeeper.item.WorkItem.Accepted;
import io.fencekeeper.item.WorkItem.AlreadyRecorded;
import io.fencekeeper.item.WorkItem.AttemptFailed;
import io.fencekeeper.item.WorkItem.Claim;
import io.fencekeeper.item.WorkItem.ClaimAbandoned;
import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.item.WorkItem.Close;
import io.fencekeeper.item.WorkItem.Command;
import io.fencekeeper.item.WorkItem.Complete;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectRecorded;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.Event;
import io.fencekeeper.item.WorkItem.Fail;
import io.fencekeeper.item.WorkItem.Get;
import io.fencekeeper.item.WorkItem.HolderNodeAlive;
import io.fencekeeper.item.WorkItem.HolderSpokeElsewhere;
import io.fencekeeper.item.WorkItem.Invalid;
import io.fencekeeper.item.WorkItem.ItemClosed;
import io.fencekeeper.item.WorkItem.ItemCompleted;
import io.fencekeeper.item.WorkItem.ItemReopened;
import io.fencekeeper.item.WorkItem.LeaseCommand;
import io.fencekeeper.item.WorkItem.LeaseGranted;
import io.fencekeeper.item.WorkItem.LeaseLost;
import io.fencekeeper.item.WorkItem.LeaseReleased;
import io.fencekeeper.item.WorkItem.LeaseRenewed;
import io.fencekeeper.item.WorkItem.MarkAmbiguous;
import io.fencekeeper.item.WorkItem.MarkedAmbiguous;
import io.fencekeeper.item.WorkItem.RecordEffect;
import io.fencekeeper.item.WorkItem.RecordEffectAndComplete;
import io.fencekeeper.item.WorkItem.Release;
import io.fencekeeper.item.WorkItem.Renew;
import io.fencekeeper.item.WorkItem.Reopen;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.Retry;
import io.fencekeeper.item.WorkItem.RetryRequested;
import io.fencekeeper.item.WorkItem.StaleCommandRejected;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.typed.javadsl.EffectFactories;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;

/**
 * The work item's command handlers (docs/design.md, "The work item"): each validates, asks {@link
 * LeaseRules} and {@link Quarantine} what the command may do, and journals and answers what they
 * decided. One per entity incarnation, built by {@link WorkItem}, which wires them to its commands.
 */
final class ItemCommands {

  private final EffectFactories<Event, State> effect;
  private final String itemValue;
  private final String idempotencyKey;
  private final Clock clock;
  private final ItemSettings settings;
  private final Runnable passivate;
  private final HolderNodes holderNodes;
  private final ExternalWorkers words;

  ItemCommands(
      EffectFactories<Event, State> effect,
      String itemValue,
      Clock clock,
      ItemSettings settings,
      Runnable passivate,
      HolderNodes holderNodes,
      ExternalWorkers words) {
    this.effect = effect;
    this.itemValue = itemValue;
    this.idempotencyKey = ItemId.idempotencyKeyOf(itemValue);
    this.clock = clock;
    this.settings = settings;
    this.passivate = passivate;
    this.holderNodes = holderNodes;
    this.words = words;
  }

  ReplyEffect<Event, State> get(State state, Get cmd) {
    return effect.reply(cmd.replyTo(), accepted(state));
  }

  ReplyEffect<Event, State> claimOnDownedNode(State state, Claim cmd) {
    return effect.reply(cmd.replyTo(), LeaseRules.claimOnDownedNode(state, clock.instant()));
  }

  ReplyEffect<Event, State> leaseOnDownedNode(State state, LeaseCommand cmd) {
    return effect.reply(cmd.replyTo(), LeaseRules.leaseOnDownedNode(state, cmd));
  }

  ReplyEffect<Event, State> unanswered(State state, Command cmd) {
    return effect.noReply();
  }

  ReplyEffect<Event, State> claim(State state, Claim cmd) {
    Instant now = clock.instant();
    Optional<Invalid> invalid = LeaseRules.invalidClaim(cmd, settings.maxLease());
    if (invalid.isPresent()) {
      return effect.reply(cmd.replyTo(), invalid.get());
    }
    if (LeaseRules.repeatsCurrentClaim(state, cmd)) {
      return claimRepeated(state, cmd, now);
    }
    Optional<Reply> refused = LeaseRules.claimRefusal(state, now);
    if (refused.isPresent()) {
      return effect.reply(cmd.replyTo(), refused.get());
    }
    // what the reads of the holders' liveness found is journaled before what it decided, so a
    // replay decides the same: a node's own worker by its node's membership, a lease API worker by
    // its last word anywhere
    List<Event> read = new ArrayList<>();
    State judged = state;
    Optional<HolderNodeAlive> alive = Quarantine.holderNodeAlive(state, holderNodes, now);
    if (alive.isPresent()) {
      judged = StateChange.holderNodeAlive(judged, alive.get());
      read.add(alive.get());
    }
    for (HolderSpokeElsewhere spoke : Quarantine.spokeElsewhere(judged, words, now)) {
      judged = StateChange.holderSpokeElsewhere(judged, spoke);
      read.add(spoke);
    }
    Optional<Quarantine.Refusal> lost =
        Quarantine.atClaim(judged, cmd.maxAttempts(), settings.quarantineAfterLosses(), now);
    if (lost.isPresent()) {
      return effect
          .persist(with(read, lost.get().event()))
          .thenReply(cmd.replyTo(), s -> lost.get().answer());
    }
    // lost together, kept apart: refused, nothing decided, so nothing journaled (the reads are
    // made again by the next claim)
    Optional<WorkItem.KeptApart> apart = Quarantine.keptApart(judged, cmd.keepApart());
    if (apart.isPresent()) {
      return effect.reply(cmd.replyTo(), apart.get());
    }
    LeaseGranted granted = LeaseRules.grant(state, cmd, now);
    return effect.persist(with(read, granted)).thenReply(cmd.replyTo(), s -> claimed(s, now));
  }

  /**
   * The worker repeats the claim its current lease was granted to (its answer was lost): the same
   * lease, its token, attempt and effect, its expiry renewed as {@code Renew} would (never shorter;
   * a lease that lapsed meanwhile is the same lease still, as nobody else was granted one). Not a
   * second grant, so it neither uses an attempt nor ends a lease in silence.
   */
  private ReplyEffect<Event, State> claimRepeated(State state, Claim cmd, Instant now) {
    Instant until = LeaseRules.renewedUntil(state, now, cmd.lease());
    if (!until.isAfter(state.leaseExpiresAt())) {
      return effect.reply(cmd.replyTo(), claimed(state, now));
    }
    return effect
        .persist(new LeaseRenewed(state.token(), until, now))
        .thenReply(cmd.replyTo(), s -> claimed(s, now));
  }

  private Claimed claimed(State s, Instant now) {
    return new Claimed(
        itemValue,
        s.token(),
        s.leaseExpiresAt(),
        s.attempt(),
        s.effect(),
        idempotencyKey,
        s.tookOver(),
        view(s),
        Quarantine.cohorts(s.budget()),
        s.effect() == EffectStatus.AMBIGUOUS ? s.lookupAfter() : null,
        now,
        s.requestId());
  }

  ReplyEffect<Event, State> renew(State state, Renew cmd) {
    Optional<Invalid> bad = LeaseRules.invalidLease(cmd.lease(), settings.maxLease());
    if (bad.isPresent()) {
      return effect.reply(cmd.replyTo(), bad.get());
    }
    Instant now = clock.instant();
    Optional<String> stale = LeaseRules.staleReason(state, cmd, now, LeaseRules.Need.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    return effect
        .persist(
            new LeaseRenewed(cmd.token(), LeaseRules.renewedUntil(state, now, cmd.lease()), now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  ReplyEffect<Event, State> recordEffect(State state, RecordEffect cmd) {
    return record(state, cmd, cmd.outcome(), false);
  }

  ReplyEffect<Event, State> recordEffectAndComplete(State state, RecordEffectAndComplete cmd) {
    return record(state, cmd, cmd.outcome(), true);
  }

  /**
   * The effect record, alone or with the completion in the same write. invariant "one effect
   * record": at most one effect record per item, and only under a live lease with the current
   * token.
   */
  private ReplyEffect<Event, State> record(
      State state, LeaseCommand cmd, EffectOutcome outcome, boolean complete) {
    ActorRef<Reply> replyTo = cmd.replyTo();
    long token = cmd.token();
    if (outcome == null || outcome.kind() == null) {
      return effect.reply(replyTo, new Invalid("outcome", "outcome with a kind is required"));
    }
    if (complete && completedBy(state, cmd)) {
      // the holder repeating its last step (its answer was lost) gets the same answer
      return effect.reply(replyTo, accepted(state));
    }
    Instant now = clock.instant();
    Optional<String> stale = LeaseRules.staleReason(state, cmd, now, LeaseRules.Need.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    if (state.effect() == EffectStatus.RECORDED) {
      return effect.reply(replyTo, new AlreadyRecorded(view(state)));
    }
    boolean reconciled = state.effect() == EffectStatus.AMBIGUOUS;
    if (!complete) {
      return effect
          .persist(new EffectRecorded(token, outcome, reconciled, now))
          .thenReply(replyTo, this::accepted);
    }
    int throttles = cmd instanceof RecordEffectAndComplete last ? last.throttles() : 0;
    // one event, one journal row: the effect and the completion together (the audit shows both)
    return effect
        .persist(new ItemCompleted(token, outcome, reconciled, throttles, now))
        .thenRun(done -> passivate.run())
        .thenReply(replyTo, this::accepted);
  }

  ReplyEffect<Event, State> markAmbiguous(State state, MarkAmbiguous cmd) {
    Instant now = clock.instant();
    Optional<String> stale =
        LeaseRules.staleReason(state, cmd, now, LeaseRules.Need.MAY_HAVE_LAPSED);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    return effect
        .persist(new MarkedAmbiguous(cmd.token(), WorkItem.truncate(cmd.reason()), now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  /** Whether the item is DONE by the lease {@code cmd} names: its own completion, repeated. */
  private static boolean completedBy(State state, LeaseCommand cmd) {
    return state.status() == Status.DONE
        && state.token() == cmd.token()
        && Objects.equals(cmd.workerId(), state.owner());
  }

  ReplyEffect<Event, State> complete(State state, Complete cmd) {
    Instant now = clock.instant();
    if (completedBy(state, cmd)) {
      // a holder repeating its own completion (lost response) gets the same answer
      return effect.reply(cmd.replyTo(), accepted(state));
    }
    Optional<String> stale = LeaseRules.staleReason(state, cmd, now, LeaseRules.Need.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    if (state.effect() != EffectStatus.RECORDED) {
      return effect.reply(
          cmd.replyTo(),
          new Invalid(
              "token",
              "cannot complete: no effect is recorded (effect is " + state.effect() + ")"));
    }
    return effect
        .persist(new ItemCompleted(cmd.token(), null, false, 0, now))
        .thenRun(done -> passivate.run())
        .thenReply(cmd.replyTo(), this::accepted);
  }

  ReplyEffect<Event, State> fail(State state, Fail cmd) {
    if (cmd.retryAfter() != null && cmd.retryAfter().isNegative()) {
      return effect.reply(
          cmd.replyTo(), new Invalid("retryAfter", "retryAfter must not be negative"));
    }
    Instant now = clock.instant();
    // a lapsed lease cannot be failed clean: it ended without an outcome, so it stays ambiguous
    Optional<String> stale = LeaseRules.staleReason(state, cmd, now, LeaseRules.Need.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    boolean exhausted =
        !cmd.retryable() || state.budget().used(state.attempt()) >= state.maxAttempts();
    Instant retryAt =
        exhausted || cmd.retryAfter() == null || cmd.retryAfter().isZero()
            ? null
            : now.plus(cmd.retryAfter());
    return effect
        .persist(
            new AttemptFailed(
                cmd.token(),
                WorkItem.truncate(cmd.error()),
                cmd.retryable(),
                exhausted,
                retryAt,
                cmd.throttles(),
                now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  ReplyEffect<Event, State> release(State state, Release cmd) {
    Instant now = clock.instant();
    // nor released clean: only MarkAmbiguous is accepted after expiry
    Optional<String> stale = LeaseRules.staleReason(state, cmd, now, LeaseRules.Need.LIVE);
    if (stale.isPresent()) {
      return rejectStale(state, cmd, stale.get(), now);
    }
    return effect
        .persist(new LeaseReleased(cmd.token(), now))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  ReplyEffect<Event, State> claimAbandoned(State state, ClaimAbandoned cmd) {
    if (!LeaseRules.grantedUnused(state, cmd.workerId())) {
      return effect.reply(cmd.replyTo(), accepted(state));
    }
    // unused: its worker never learnt of it, so it neither counts as a loss nor breaks the run
    return effect
        .persist(new LeaseReleased(state.token(), clock.instant(), true))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  ReplyEffect<Event, State> close(State state, Close cmd) {
    if (state.status() == Status.DONE
        || state.status() == Status.CLOSED
        || state.status() == Status.QUARANTINED) {
      // DONE stays DONE; closing twice is the same close; a QUARANTINED item has no holder to
      // fence off and stays quarantined, so the run shows it until an operator retries it
      return effect.reply(cmd.replyTo(), accepted(state));
    }
    return effect
        .persist(
            new ItemClosed(
                state.token() + 1,
                cmd.reason() == null ? "closed" : WorkItem.truncate(cmd.reason()),
                LeaseRules.holder(state),
                clock.instant()))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  ReplyEffect<Event, State> reopen(State state, Reopen cmd) {
    if (state.status() != Status.CLOSED && state.status() != Status.FAILED) {
      return effect.reply(cmd.replyTo(), accepted(state));
    }
    return effect
        .persist(new ItemReopened(state.status(), clock.instant()))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  ReplyEffect<Event, State> retry(State state, Retry cmd) {
    if (state.status() != Status.FAILED && state.status() != Status.QUARANTINED) {
      return effect.reply(
          cmd.replyTo(),
          new Invalid(
              "status",
              "only a FAILED or QUARANTINED item can be retried; it is " + state.status()));
    }
    return effect
        .persist(new RetryRequested(clock.instant()))
        .thenReply(cmd.replyTo(), this::accepted);
  }

  /**
   * Invariant "stale changes nothing": a command that lost is answered LeaseLost and audited (with
   * the worker, the token it presented and the one that was current), and changes nothing else but
   * what its late word tells about its holder ({@link Quarantine#lateWord}).
   */
  private ReplyEffect<Event, State> rejectStale(
      State state, LeaseCommand cmd, String reason, Instant now) {
    String command = cmd.getClass().getSimpleName();
    StaleCommandRejected rejected =
        new StaleCommandRejected(
            command, WorkItem.truncate(cmd.workerId()), cmd.token(), state.token(), reason, now);
    List<Event> events = new ArrayList<>(List.of(rejected));
    Quarantine.lateWord(state, cmd, now, settings.quarantineAfterLosses()).ifPresent(events::add);
    return effect
        .persist(events)
        .thenReply(
            cmd.replyTo(), s -> new LeaseLost(cmd.token(), state.token(), reason, s.status()));
  }

  private static List<Event> with(List<Event> first, Event last) {
    if (first.isEmpty()) {
      return List.of(last);
    }
    List<Event> all = new ArrayList<>(first);
    all.add(last);
    return all;
  }

  private Accepted accepted(State state) {
    return new Accepted(view(state));
  }

  private ItemView view(State s) {
    return ItemView.of(itemValue, idempotencyKey, s);
  }
}

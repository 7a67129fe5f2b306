package io.fencekeeper.worker;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.KeepApart;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.budget.Permits;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.concurrent.ExecutionContextExecutor;

/**
 * One attempt at one item, the worker loop of docs/design.md, "The worker loop": claim; if the
 * effect is recorded, complete; if ambiguous, reconcile with lookup first, once every cleanup that
 * may have been sent under the key is past its deadline; otherwise plan, apply with the item's
 * idempotency key, the claim's fencing token and a deadline, record, complete. Long items renew at
 * a third of the lease; a renewal answered LeaseLost cancels the attempt, and the attempt checks
 * its own lease deadline (minus a safety margin) before every provider mutation. When its pool is
 * leaving (the node shuts down), it hands the lease back at the next step that has nothing in
 * flight instead of starting another provider call.
 */
public final class ItemAttempt {

  private static final Logger log = LoggerFactory.getLogger(ItemAttempt.class);

  /** How long a recording command whose ask failed waits before it is sent again. */
  static final Duration ASK_AGAIN_AFTER = Duration.ofMillis(500);

  /** How many provider retries one attempt makes under its lease before handing the item back. */
  static final int RETRIES_PER_ATTEMPT = 3;

  /**
   * Throttling is the provider asking us to wait, not a failure of the item: an attempt keeps its
   * lease (renewing it) and waits many times before it hands the item back, so a throttling
   * provider does not use up the item's attempts.
   */
  static final int THROTTLED_RETRIES_PER_ATTEMPT = 30;

  /**
   * Everything an attempt needs that is the same for all attempts of a worker pool and provider;
   * {@code permits}: the provider's budget on this node, a permit per call; {@code deadlines}: the
   * provider's request timeout and clock-skew allowance, for the cleanup deadline and the wait
   * before a lookup.
   */
  public record Context(
      ItemGateway items,
      Provider provider,
      Clock clock,
      Scheduler scheduler,
      ExecutionContextExecutor executor,
      Backoff backoff,
      AttemptListener listener,
      Permits permits,
      CleanupDeadlines deadlines) {

    /** With the default request timeout and clock-skew allowance. */
    public Context(
        ItemGateway items,
        Provider provider,
        Clock clock,
        Scheduler scheduler,
        ExecutionContextExecutor executor,
        Backoff backoff,
        AttemptListener listener,
        Permits permits) {
      this(
          items,
          provider,
          clock,
          scheduler,
          executor,
          backoff,
          listener,
          permits,
          CleanupDeadlines.DEFAULTS);
    }

    /** A provider without a budget. */
    public Context(
        ItemGateway items,
        Provider provider,
        Clock clock,
        Scheduler scheduler,
        ExecutionContextExecutor executor,
        Backoff backoff,
        AttemptListener listener) {
      this(items, provider, clock, scheduler, executor, backoff, listener, Permits.UNLIMITED);
    }
  }

  /** Observations the governor and metrics care about. */
  public interface AttemptListener {
    default void providerCall(String operation, Duration latency, ProviderError error) {}

    default void reconciled(boolean found) {}

    AttemptListener NONE = new AttemptListener() {};
  }

  private final Context ctx;
  private final ItemId item;
  private final String workerId;
  private final Duration lease;
  private final int maxAttempts;
  private final BooleanSupplier leaving;
  private final CohortGate cohorts;
  // the loss cohorts the granted claim joined on this node: they count until the attempt ends
  private volatile Set<String> joined = Set.of();
  private final RunCalls runCalls;
  private final AtomicBoolean cancelled = new AtomicBoolean();
  private volatile Claimed claim;
  // when the lease ends at the latest by this worker's own clock: the item grants exactly the lease
  // asked for from its own "now", which comes after the ask left, so the ask's time on this clock
  // plus the lease is never later than the item's expiry, whatever the two clocks say (an expiry
  // instant of the item's clock compared with this one would be off by the skew between them)
  private volatile Instant leaseExpiresAt;
  private Cancellable renewal;
  // the latest deadline of the cleanups this attempt sent: none of them commits after it, so a
  // lookup once it (plus the allowance) has passed is final
  private volatile Instant sentUntil;
  // journaled with the attempt's last step: the run's throttled-answers counter is read from there
  private final AtomicInteger throttles = new AtomicInteger();
  // a lookup of this attempt found nothing under the key: a later "nothing to do" is checked
  private volatile boolean lookedUpNothing;

  public ItemAttempt(Context ctx, ItemId item, String workerId, Duration lease, int maxAttempts) {
    this(ctx, item, workerId, lease, maxAttempts, () -> false, CohortGate.NONE, new RunCalls());
  }

  /**
   * {@code leaving}: whether the pool is draining, read before every provider call; {@code
   * cohorts}: the loss cohorts its node has in flight, which its claim keeps apart from; {@code
   * runCalls}: where each provider call of the attempt is counted for its run's governor.
   */
  ItemAttempt(
      Context ctx,
      ItemId item,
      String workerId,
      Duration lease,
      int maxAttempts,
      BooleanSupplier leaving,
      CohortGate cohorts,
      RunCalls runCalls) {
    this.ctx = ctx;
    this.item = item;
    this.workerId = workerId;
    this.lease = lease;
    this.maxAttempts = maxAttempts;
    this.leaving = leaving;
    this.cohorts = cohorts;
    this.runCalls = runCalls;
  }

  /** Runs the attempt; the stage never fails: every ending is an {@link AttemptResult}. */
  public CompletionStage<AttemptResult> run() {
    return claim(cohorts.firstClaim(), false)
        .exceptionally(
            failure -> {
              log.warn("attempt on {} ended without an answer: {}", item, failure.toString());
              return new AttemptResult.Abandoned(
                  "no answer from the item: " + rootMessage(failure));
            })
        .whenComplete(
            (result, failure) -> {
              stopRenewing();
              cohorts.left(joined);
            });
  }

  /**
   * The claim, keeping {@code keepApart}. An item in a loss cohort is kept apart by the first
   * claim; it claims again in its node's turn for cohorts ({@link CohortGate}), and a claim made in
   * the turn ends it, granted or not ("Lost together, kept apart" in docs/design.md).
   */
  private CompletionStage<AttemptResult> claim(KeepApart keepApart, boolean inTurn) {
    Instant asked = ctx.clock().instant();
    return ctx.items()
        .claim(item, workerId, lease, maxAttempts, keepApart)
        .handle(
            (reply, failure) -> {
              if (failure != null) {
                if (inTurn) {
                  cohorts.turnEnded(Set.of());
                }
                ctx.items().claimAbandoned(item, workerId);
                return CompletableFuture.<AttemptResult>completedFuture(
                    new AttemptResult.Unanswered("claim not answered: " + rootMessage(failure)));
              }
              if (reply instanceof WorkItem.KeptApart && !inTurn && cohorts.keeps()) {
                return cohorts.turn().thenCompose(turn -> claim(turn, true));
              }
              Set<String> granted = reply instanceof Claimed c ? c.cohorts() : Set.of();
              joined = granted;
              if (inTurn) {
                cohorts.turnEnded(granted);
              } else {
                cohorts.joined(granted);
              }
              return onClaimReply(reply, asked);
            })
        .thenCompose(result -> result);
  }

  private CompletionStage<AttemptResult> onClaimReply(Reply reply, Instant asked) {
    if (reply instanceof Claimed c) {
      claim = c;
      leaseExpiresAt = asked.plus(lease);
      startRenewing();
      return switch (c.effect()) {
        case RECORDED -> complete();
        case AMBIGUOUS -> reconcileAt(lookupAfterTakeover(c), 0);
        case NONE -> planAndApply(0);
      };
    }
    if (reply instanceof WorkItem.LeaseHeld
        || reply instanceof WorkItem.NotClaimable
        || reply instanceof WorkItem.KeptApart) {
      return done(AttemptResult.ofClaimAnswer(reply, ctx.clock().instant()));
    }
    return done(unexpected(reply, "claim"));
  }

  // --- reconciliation ----------------------------------------------------------------------------

  /**
   * When an AMBIGUOUS item taken from an earlier holder may be looked up: the end of the last lease
   * under which a cleanup may have been sent, as the item says, plus the allowance. Every such
   * cleanup had a deadline no later than that end. When the item does not say (a host of an earlier
   * version), the claim came after any lease it ended, so the allowance from now.
   */
  private Instant lookupAfterTakeover(Claimed c) {
    Instant bound = c.lookupAfter() != null ? c.lookupAfter() : ctx.clock().instant();
    return ctx.deadlines().lookupAt(bound);
  }

  /**
   * invariant "a lookup is final": the key is looked up only once every cleanup that may have been
   * sent under it is past its deadline plus the allowance; the lease is renewed meanwhile.
   */
  private CompletionStage<AttemptResult> reconcileAt(Instant lookupAt, int retry) {
    Duration wait = Duration.between(ctx.clock().instant(), lookupAt);
    if (wait.isNegative() || wait.isZero()) {
      return reconcile(retry);
    }
    return after(wait).thenCompose(ignored -> reconcile(retry));
  }

  /**
   * invariant "reconcile before apply": an ambiguous item is looked up before anything is sent
   * again.
   */
  private CompletionStage<AttemptResult> reconcile(int retry) {
    if (cancelled.get()) {
      return done(new AttemptResult.Lost("renewal answered LeaseLost"));
    }
    if (leaving.getAsBoolean()) {
      return handBack(ctx.clock().instant()); // still AMBIGUOUS: the next holder looks it up
    }
    return timed("lookup", () -> ctx.provider().lookup(item, claim.idempotencyKey()))
        .handle(
            (found, failure) -> {
              if (failure == null) {
                ctx.listener().reconciled(found.isPresent());
                if (found.isPresent()) {
                  return record(OutcomeKind.FOUND_BY_LOOKUP, found.get());
                }
                // the retries go on counting: an apply that is ambiguous every time and never
                // found (a provider that fails before it commits, a plugin that throws) ends the
                // attempt after its retries instead of holding the worker until the run's deadline
                lookedUpNothing = true;
                return planAndApply(retry);
              }
              return onProviderError(
                  ProviderError.from(failure), retry, () -> reconcile(retry + 1));
            })
        .thenCompose(stage -> stage);
  }

  // --- plan and apply ----------------------------------------------------------------------------

  private CompletionStage<AttemptResult> planAndApply(int retry) {
    if (cancelled.get()) {
      return done(new AttemptResult.Lost("renewal answered LeaseLost"));
    }
    if (leaving.getAsBoolean()) {
      return handBack(ctx.clock().instant());
    }
    return timed("plan", () -> ctx.provider().plan(item))
        .handle(
            (plan, failure) -> {
              if (failure != null) {
                return onProviderError(
                    ProviderError.from(failure), retry, () -> planAndApply(retry + 1));
              }
              if (plan.nothingToDo()) {
                return lookedUpNothing ? lookUpAgain(plan, 0) : recordNothingToDo(plan);
              }
              return apply(plan, retry);
            })
        .thenCompose(stage -> stage);
  }

  /**
   * invariant "nothing to do is never a lost effect": after a lookup that found nothing, a plan
   * that says nothing is left to do may say so because an effect committed after that lookup (a
   * provider whose clock or commit ran past the deadline, docs/provider-protocol.md, "The
   * deadline"; a plan may change only once the effect is committed, and a lookup answers 200 from
   * then on). So the key is looked up once more before nothing to do is recorded: found, that is
   * the effect, recorded as found; not found, nothing to do is the truth.
   */
  private CompletionStage<AttemptResult> lookUpAgain(Plan plan, int retry) {
    if (cancelled.get()) {
      return done(new AttemptResult.Lost("renewal answered LeaseLost"));
    }
    if (leaving.getAsBoolean()) {
      return handBack(ctx.clock().instant());
    }
    return timed("lookup", () -> ctx.provider().lookup(item, claim.idempotencyKey()))
        .handle(
            (found, failure) -> {
              if (failure != null) {
                return onProviderError(
                    ProviderError.from(failure), retry, () -> lookUpAgain(plan, retry + 1));
              }
              if (found.isEmpty()) {
                return recordNothingToDo(plan);
              }
              log.warn(
                  "{}: the provider committed the effect under {} after its lookup found nothing"
                      + " (a commit past the cleanup's deadline: check the provider's clock and"
                      + " commit time against the clock-skew allowance); recorded as found",
                  item,
                  claim.idempotencyKey());
              return record(OutcomeKind.FOUND_BY_LOOKUP, found.get());
            })
        .thenCompose(stage -> stage);
  }

  private CompletionStage<AttemptResult> apply(Plan plan, int retry) {
    if (cancelled.get()) {
      return done(new AttemptResult.Lost("renewal answered LeaseLost"));
    }
    // self-fencing: never start a mutation the lease may not outlive; nor one on a leaving node
    Instant now = ctx.clock().instant();
    if (!now.isBefore(leaseExpiresAt.minus(safetyMargin())) || leaving.getAsBoolean()) {
      return handBack(now);
    }
    return timed("apply", () -> ctx.provider().apply(cleanup(plan)))
        .handle(
            (outcome, failure) -> {
              if (failure == null) {
                return record(OutcomeKind.APPLIED, outcome);
              }
              ProviderError error = ProviderError.from(failure);
              if (error instanceof ProviderError.Ambiguous) {
                // the provider may have applied it: say so before anything else, then reconcile
                // once its deadline has passed
                return ctx.items()
                    .markAmbiguous(
                        item,
                        workerId,
                        claim.token(),
                        error.message() + " (cleanup deadline " + sentUntil + ")")
                    .thenCompose(
                        reply ->
                            reply instanceof WorkItem.Accepted
                                ? reconcileAfterDeadline(retry, error)
                                : done(new AttemptResult.Lost("lease lost while ambiguous")));
              }
              return onProviderError(error, retry, () -> apply(plan, retry + 1));
            })
        .thenCompose(stage -> stage);
  }

  /**
   * The cleanup as it is sent now (after the wait for a permit): its deadline is the earlier of now
   * plus the request timeout and the lease's end less the safety margin, remembered for the lookup.
   */
  private Cleanup cleanup(Plan plan) {
    Instant deadline =
        ctx.deadlines().deadline(ctx.clock().instant(), leaseExpiresAt, safetyMargin());
    Instant sent = sentUntil;
    sentUntil = sent != null && sent.isAfter(deadline) ? sent : deadline;
    return new Cleanup(item, plan, claim.idempotencyKey(), claim.token(), deadline);
  }

  /**
   * After an ambiguous cleanup: the lookup waits for the deadline of every cleanup this attempt
   * sent (plus the allowance) under the renewed lease, as an attempt's retry; one with no retries
   * left hands the item back AMBIGUOUS, and the item tells the next holder how long to wait.
   */
  private CompletionStage<AttemptResult> reconcileAfterDeadline(int retry, ProviderError error) {
    Duration backoff = ctx.backoff().delay(retry);
    if (leaving.getAsBoolean()) {
      return handBack(ctx.clock().instant());
    }
    if (retry + 1 >= RETRIES_PER_ATTEMPT) {
      return fail(error.message(), true, backoff);
    }
    Instant lookupAt = ctx.deadlines().lookupAt(sentUntil);
    Instant afterBackoff = ctx.clock().instant().plus(backoff);
    return reconcileAt(afterBackoff.isAfter(lookupAt) ? afterBackoff : lookupAt, retry + 1);
  }

  /**
   * Maps a provider error to what happens next: a retry under the same lease with backoff
   * (throttled: honouring Retry-After), or handing the item back with a typed failure.
   */
  private CompletionStage<AttemptResult> onProviderError(
      ProviderError error, int retry, Supplier<CompletionStage<AttemptResult>> again) {
    if (error instanceof ProviderError.StaleToken stale) {
      return done(
          new AttemptResult.Lost(
              "provider saw token " + stale.highestSeen() + " > ours " + stale.presented()));
    }
    if (error instanceof ProviderError.Permanent permanent) {
      return fail(permanent.message(), false, Duration.ZERO);
    }
    if (error instanceof ProviderError.Throttled) {
      throttles.incrementAndGet();
    }
    // throttled, transient, or an ambiguous read: the same request again, later
    return retryAfterBackoff(retry, again, error);
  }

  private CompletionStage<AttemptResult> retryAfterBackoff(
      int retry, Supplier<CompletionStage<AttemptResult>> again, ProviderError error) {
    Duration delay = ctx.backoff().delay(retry);
    if (error instanceof ProviderError.Throttled throttled
        && throttled.retryAfter().compareTo(delay) > 0) {
      delay = throttled.retryAfter();
    }
    Instant resumeAt = ctx.clock().instant().plus(delay);
    boolean leaseAllows = resumeAt.isBefore(leaseExpiresAt.minus(safetyMargin()));
    int limit =
        error instanceof ProviderError.Throttled
            ? THROTTLED_RETRIES_PER_ATTEMPT
            : RETRIES_PER_ATTEMPT;
    if (leaving.getAsBoolean()) {
      // not an attempt used up (the node stops, not the item: a closed permit pool says so too)
      return handBack(resumeAt);
    }
    if (retry + 1 >= limit || !leaseAllows) {
      return fail(error.message(), true, delay);
    }
    return after(delay).thenCompose(ignored -> again.get());
  }

  /**
   * Nothing was sent in this step (or what was sent is journaled as AMBIGUOUS), so handing the item
   * back is the truth: the lease ends now instead of running out, and the item may be claimed again
   * from {@code retryAt}.
   */
  private CompletionStage<AttemptResult> handBack(Instant retryAt) {
    return ctx.items()
        .release(item, workerId, claim.token())
        .thenApply(reply -> (AttemptResult) new AttemptResult.RetryAt(retryAt));
  }

  // --- recording ---------------------------------------------------------------------------------

  private CompletionStage<AttemptResult> recordNothingToDo(Plan plan) {
    return recordOutcome(new EffectOutcome(OutcomeKind.NOTHING_TO_DO, null, plan.description()));
  }

  private CompletionStage<AttemptResult> record(OutcomeKind kind, Receipt outcome) {
    return recordOutcome(new EffectOutcome(kind, outcome.effectId(), outcome.status()));
  }

  private CompletionStage<AttemptResult> recordOutcome(EffectOutcome outcome) {
    return askAgainWhileLeased(
            () ->
                ctx.items()
                    .recordEffectAndComplete(
                        item, workerId, claim.token(), outcome, throttles.get()))
        .thenCompose(
            reply -> {
              if (reply instanceof WorkItem.Accepted a
                  && a.item().status() == WorkItem.Status.DONE) {
                return done(new AttemptResult.Done());
              }
              if (reply instanceof WorkItem.AlreadyRecorded recorded) {
                // recorded by this very attempt (an answer lost on the way back): finish it
                return recorded.item().status() == WorkItem.Status.DONE
                    ? done(new AttemptResult.Done())
                    : complete();
              }
              if (reply instanceof WorkItem.LeaseLost lost) {
                // the next holder finds the effect AMBIGUOUS and reconciles: one effect stays one
                return done(new AttemptResult.Lost(lost.reason()));
              }
              return done(unexpected(reply, "record effect"));
            });
  }

  private CompletionStage<AttemptResult> complete() {
    return askAgainWhileLeased(() -> ctx.items().complete(item, workerId, claim.token()))
        .thenApply(
            reply -> {
              if (reply instanceof WorkItem.Accepted a
                  && a.item().status() == WorkItem.Status.DONE) {
                return new AttemptResult.Done();
              }
              if (reply instanceof WorkItem.LeaseLost lost) {
                return new AttemptResult.Lost(lost.reason());
              }
              return unexpected(reply, "complete");
            });
  }

  private CompletionStage<AttemptResult> fail(String error, boolean retryable, Duration delay) {
    return ctx.items()
        .fail(item, workerId, claim.token(), error, retryable, delay, throttles.get())
        .thenApply(
            reply -> {
              if (reply instanceof WorkItem.Accepted a) {
                return a.item().status() == WorkItem.Status.FAILED
                    ? new AttemptResult.Failed(error)
                    : new AttemptResult.RetryAt(
                        a.item().retryAt() != null ? a.item().retryAt() : ctx.clock().instant());
              }
              if (reply instanceof WorkItem.LeaseLost lost) {
                return new AttemptResult.Lost(lost.reason());
              }
              return unexpected(reply, "fail");
            });
  }

  /**
   * A command that records what the provider did, sent again when its ask fails (no answer in time,
   * a shard moving, a node restarting beside this one) while the lease lasts: a repeat is answered
   * as the first was (AlreadyRecorded, or the same completion). Given up on the first failure, the
   * attempt ended "without an answer" and its lease ran out to be taken over: one of 13 leases in a
   * rolling restart at load 10-19.
   */
  private CompletionStage<Reply> askAgainWhileLeased(Supplier<CompletionStage<Reply>> ask) {
    return ask.get()
        .handle(
            (reply, failure) -> {
              if (failure == null) {
                return CompletableFuture.completedFuture(reply);
              }
              if (!ctx.clock().instant().plus(ASK_AGAIN_AFTER).isBefore(leaseExpiresAt)) {
                return CompletableFuture.<Reply>failedFuture(failure);
              }
              log.info("{} got no answer ({}); asking again", item, failure.toString());
              return after(ASK_AGAIN_AFTER).thenCompose(ignored -> askAgainWhileLeased(ask));
            })
        .thenCompose(stage -> stage);
  }

  // --- lease renewal -----------------------------------------------------------------------------

  private void startRenewing() {
    Duration every = lease.dividedBy(3);
    renewal = ctx.scheduler().scheduleAtFixedRate(every, every, this::renewOnce, ctx.executor());
  }

  private void renewOnce() {
    Claimed c = claim;
    if (c == null || cancelled.get()) {
      return;
    }
    Instant asked = ctx.clock().instant();
    ctx.items()
        .renew(item, workerId, c.token(), lease)
        .whenComplete(
            (reply, failure) -> {
              if (reply instanceof WorkItem.Accepted) {
                // at least the lease from the item's "now", never shortened (as for the claim)
                Instant renewed = asked.plus(lease);
                if (renewed.isAfter(leaseExpiresAt)) {
                  leaseExpiresAt = renewed;
                }
              } else if (reply instanceof WorkItem.LeaseLost) {
                // best effort: the provider call in flight may still land, fencing decides
                cancelled.set(true);
              }
            });
  }

  private void stopRenewing() {
    if (renewal != null) {
      renewal.cancel();
    }
  }

  // --- helpers -----------------------------------------------------------------------------------

  private Duration safetyMargin() {
    Duration tenth = lease.dividedBy(10);
    return tenth.compareTo(Duration.ofSeconds(2)) < 0 ? tenth : Duration.ofSeconds(2);
  }

  /** One provider call under a permit of the provider's budget, given back when it ends. */
  private <T> CompletionStage<T> timed(String operation, Supplier<CompletionStage<T>> call) {
    return permit(operation)
        .thenCompose(
            permit -> {
              long start = System.nanoTime();
              CompletionStage<T> stage;
              try {
                stage = call.get();
              } catch (RuntimeException e) {
                stage = CompletableFuture.failedFuture(e);
              }
              return stage.whenComplete(
                  (value, failure) -> {
                    ProviderError error = failure == null ? null : ProviderError.from(failure);
                    permit.release(error); // a throttled share slows every caller
                    runCalls.called(error);
                    ctx.listener()
                        .providerCall(
                            operation, Duration.ofNanos(System.nanoTime() - start), error);
                  });
            });
  }

  /**
   * Waits for a permit while the lease is renewed; a lost lease ends the wait, and a mutation the
   * lease may no longer outlive is not started (nothing was sent: transient).
   */
  private CompletionStage<Permits.Permit> permit(String operation) {
    return ctx.permits()
        .acquire(lease.dividedBy(3))
        .thenCompose(
            permit -> {
              boolean leaseTooShort =
                  operation.equals("apply")
                      && !ctx.clock().instant().isBefore(leaseExpiresAt.minus(safetyMargin()));
              if (permit.isPresent() && !cancelled.get() && !leaseTooShort) {
                return CompletableFuture.completedFuture(permit.get());
              }
              permit.ifPresent(p -> p.release(null));
              if (permit.isEmpty() && !cancelled.get()) {
                return permit(operation);
              }
              return CompletableFuture.<Permits.Permit>failedFuture(
                  new ProviderException(
                      new ProviderError.Transient(
                          "no call made: "
                              + (cancelled.get() ? "the lease was lost" : "the lease ran short")
                              + " while waiting for a permit of the provider's budget")));
            });
  }

  private CompletionStage<Void> after(Duration delay) {
    CompletableFuture<Void> later = new CompletableFuture<>();
    ctx.scheduler().scheduleOnce(delay, () -> later.complete(null), ctx.executor());
    return later;
  }

  private static CompletionStage<AttemptResult> done(AttemptResult result) {
    return CompletableFuture.completedFuture(result);
  }

  private AttemptResult unexpected(Reply reply, String step) {
    log.error("unexpected answer to {} on {}: {}", step, item, reply);
    return new AttemptResult.Abandoned("unexpected answer to " + step + ": " + reply);
  }

  private static String rootMessage(Throwable failure) {
    Throwable t = failure;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.toString();
  }
}

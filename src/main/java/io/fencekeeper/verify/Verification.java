package io.fencekeeper.verify;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.provider.Provider;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * One verification of one ended run (docs/design.md, "Verifying a run"): an event-sourced actor,
 * child of the {@link VerificationKeeper}, that walks the run's scope ({@link VerificationPass})
 * and journals a checkpoint for every group of rows it has checked: where it got to, the counts per
 * outcome and the findings. After a crash (its node killed, the keeper moved) it recovers from its
 * journal and goes on after its last checkpoint. Its findings stay in its journal, which the export
 * reads; its state keeps the counts and the first {@link VerificationView#SHOWN} findings.
 *
 * <p>Its events and state are nested here on purpose: their class names are the journal's manifests
 * (docs/design.md, "Code map").
 */
public final class Verification
    extends EventSourcedBehaviorWithEnforcedReplies<
        Verification.Command, Verification.Event, Verification.State> {

  /** An ended verification stops when nobody asked about it for this long. */
  static final Duration IDLE = Duration.ofSeconds(60);

  public static PersistenceId persistenceId(String verificationId) {
    return PersistenceId.of("Verification", verificationId);
  }

  static Behavior<Command> create(
      VerificationPlan plan, VerifyDependencies deps, ActorRef<VerificationKeeper.Command> keeper) {
    return Behaviors.<Command>supervise(
            Behaviors.setup(
                ctx ->
                    Behaviors.withTimers(
                        timers -> new Verification(ctx, timers, plan, deps, keeper))))
        .onFailure(
            SupervisorStrategy.restartWithBackoff(
                Duration.ofSeconds(1), Duration.ofSeconds(30), 0.2));
  }

  // --- protocol ----------------------------------------------------------------------------------

  public sealed interface Command extends CborSerializable {}

  public record Get(ActorRef<VerificationKeeper.Answer> replyTo) implements Command {}

  /** From the pass {@code pass}: these rows are checked, journal them. */
  record Checkpoint(String pass, List<VerificationPass.Step> steps, ActorRef<Done> replyTo)
      implements Command {}

  /** The pass {@code pass} ended: every row checked ({@code failure} null), or it could not. */
  record PassEnded(String pass, String failure) implements Command {}

  record Idle() implements Command {}

  public sealed interface Event extends CborSerializable {}

  /**
   * Rows up to {@code nextSeq} are checked: {@code scanned} rows passed in all, {@code tally} what
   * this group adds, {@code findings} its discrepancies and resolutions.
   */
  public record Checkpointed(
      int nextSeq, long scanned, Tally tally, List<Finding> findings, Instant at)
      implements Event {}

  public record Ended(VerificationView.Status status, String reason, Instant at) implements Event {}

  public record State(
      int nextSeq,
      long scanned,
      Tally tally,
      List<Finding> shown,
      long findingCount,
      VerificationView.Status status,
      Instant endedAt,
      String reason)
      implements CborSerializable {

    State onCheckpointed(Checkpointed e) {
      List<Finding> next = shown;
      if (shown.size() < VerificationView.SHOWN && !e.findings().isEmpty()) {
        next = new ArrayList<>(shown);
        for (Finding finding : e.findings()) {
          if (next.size() < VerificationView.SHOWN) {
            next.add(finding);
          }
        }
      }
      return new State(
          e.nextSeq(),
          e.scanned(),
          tally.plus(e.tally()),
          next,
          findingCount + e.findings().size(),
          status,
          endedAt,
          reason);
    }

    State onEnded(Ended e) {
      return new State(
          nextSeq, scanned, tally, shown, findingCount, e.status(), e.at(), e.reason());
    }
  }

  // --- behaviour ---------------------------------------------------------------------------------

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final VerificationPlan plan;
  private final VerifyDependencies deps;
  private final ActorRef<VerificationKeeper.Command> keeper;
  private VerificationPass.Running running;
  // the pass this incarnation started: a message of an earlier one (before a restart) is stale
  private String pass;

  private Verification(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      VerificationPlan plan,
      VerifyDependencies deps,
      ActorRef<VerificationKeeper.Command> keeper) {
    super(persistenceId(plan.id()));
    this.ctx = ctx;
    this.timers = timers;
    this.plan = plan;
    this.deps = deps;
    this.keeper = keeper;
  }

  @Override
  public State emptyState() {
    return new State(0, 0, Tally.NONE, List.of(), 0, VerificationView.Status.RUNNING, null, null);
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    // snapshots bound recovery; the events stay: they hold the findings the export reads
    return RetentionCriteria.snapshotEvery(100, 2);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), this::onRecovered)
        .onSignal(PostStop.instance(), state -> stopPass())
        .onSignal(PreRestart.instance(), state -> stopPass())
        .build();
  }

  private void onRecovered(State state) {
    if (state.status() == VerificationView.Status.RUNNING) {
      keeper.tell(new VerificationKeeper.Progress(view(state).summary()));
      startPass(state);
    } else {
      timers.startSingleTimer(new Idle(), IDLE);
    }
  }

  private void startPass(State state) {
    pass = UUID.randomUUID().toString();
    String thisPass = pass;
    Optional<Provider> provider = deps.providers().apply(plan.provider());
    Optional<SparePermits> permits = deps.permits().apply(plan.provider());
    if (provider.isEmpty() || permits.isEmpty()) {
      ctx.getSelf()
          .tell(
              new PassEnded(
                  thisPass,
                  "provider '" + plan.provider() + "' is not configured on the verifying node"));
      return;
    }
    ItemCheck check =
        new ItemCheck(
            deps.items(),
            provider.get(),
            plan.provider(),
            permits.get(),
            deps.later(),
            deps.listener());
    running =
        VerificationPass.start(
            ctx.getSystem(),
            plan,
            new VerificationPass.From(state.nextSeq(), state.scanned(), state.tally().checked()),
            deps.store(),
            deps.blocking(),
            check,
            2 * deps.settings().maxInFlight(),
            deps.settings().checkpointEvery(),
            steps -> checkpoint(thisPass, steps));
    ActorRef<Command> self = ctx.getSelf();
    running
        .done()
        .whenComplete(
            (done, failure) ->
                self.tell(new PassEnded(thisPass, failure == null ? null : reason(failure))));
  }

  private CompletionStage<Done> checkpoint(String thisPass, List<VerificationPass.Step> steps) {
    return AskPattern.ask(
        ctx.getSelf(),
        replyTo -> new Checkpoint(thisPass, steps, replyTo),
        Duration.ofSeconds(60),
        ctx.getSystem().scheduler());
  }

  private void stopPass() {
    if (running != null) {
      running.stop().abort(new CancellationException("the verification stopped"));
      running = null;
    }
  }

  /**
   * A pass ends where the run's scope ends, and a prune deletes the scope from its first row: a
   * scope shorter than the run was pruned before or while it was checked. Nothing orders a prune
   * and a verification of the same run, so the verification says what it could not check rather
   * than agree on the rows that were left.
   */
  private String rowsMissing(State state) {
    return state.scanned() >= plan.population()
        ? null
        : "only "
            + state.scanned()
            + " of the run's "
            + plan.population()
            + " rows were there to check: the run was pruned before or while it was verified";
  }

  /** Why a pass failed, in one line: the item that could not be checked, or the failure. */
  static String reason(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ItemCheck.CouldNotCheck couldNot) {
        return couldNot.getMessage();
      }
    }
    Throwable root = failure;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    String text = root.getClass().getSimpleName() + ": " + root.getMessage();
    return text.length() <= 300 ? text : text.substring(0, 300);
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Get.class, this::onGet)
        .onCommand(Checkpoint.class, this::onCheckpoint)
        .onCommand(PassEnded.class, this::onPassEnded)
        .onCommand(
            Idle.class,
            (state, idle) ->
                state.status() == VerificationView.Status.RUNNING
                    ? Effect().noReply()
                    : Effect().stop().thenNoReply())
        .build();
  }

  private ReplyEffect<Event, State> onGet(State state, Get get) {
    if (state.status() != VerificationView.Status.RUNNING) {
      timers.startSingleTimer(new Idle(), IDLE);
    }
    return Effect().reply(get.replyTo(), new VerificationKeeper.Answer(view(state)));
  }

  private ReplyEffect<Event, State> onCheckpoint(State state, Checkpoint cmd) {
    if (!cmd.pass().equals(pass) || state.status() != VerificationView.Status.RUNNING) {
      return Effect().noReply(); // a pass of an earlier incarnation: its ask times out
    }
    List<VerificationPass.Step> steps = cmd.steps();
    Tally tally = Tally.NONE;
    List<Finding> findings = new ArrayList<>();
    for (VerificationPass.Step step : steps) {
      if (step.finding() != null) {
        tally = tally.plus(step.finding());
        if (step.finding().outcome() != Outcome.AGREE) {
          findings.add(step.finding());
        }
      }
    }
    Checkpointed event =
        new Checkpointed(
            steps.get(steps.size() - 1).seq() + 1,
            state.scanned() + steps.size(),
            tally,
            findings,
            deps.clock().instant());
    return Effect()
        .persist(event)
        .thenRun(s -> keeper.tell(new VerificationKeeper.Progress(view(s).summary())))
        .thenReply(cmd.replyTo(), s -> Done.getInstance());
  }

  private ReplyEffect<Event, State> onPassEnded(State state, PassEnded ended) {
    if (!ended.pass().equals(pass) || state.status() != VerificationView.Status.RUNNING) {
      return Effect().noReply();
    }
    running = null;
    String failure = ended.failure() != null ? ended.failure() : rowsMissing(state);
    Ended event =
        failure == null
            ? new Ended(VerificationView.Status.COMPLETED, null, deps.clock().instant())
            : new Ended(VerificationView.Status.FAILED, failure, deps.clock().instant());
    return Effect()
        .persist(event)
        .thenRun(
            s -> {
              VerificationView view = view(s);
              ctx.getLog()
                  .info(
                      "verification {} of {} {}: {} checked, {} ({})",
                      plan.number(),
                      plan.runId(),
                      view.verdict(),
                      view.checked(),
                      view.tally(),
                      s.reason() == null ? "complete" : s.reason());
              keeper.tell(new VerificationKeeper.Finished(view.summary()));
              timers.startSingleTimer(new Idle(), IDLE);
            })
        .thenNoReply();
  }

  VerificationView view(State s) {
    return new VerificationView(
        plan.runId(),
        plan.number(),
        s.status(),
        plan.provider(),
        plan.population(),
        plan.sample(),
        plan.seed(),
        plan.sampling().toCheck(),
        s.scanned(),
        s.tally(),
        s.shown(),
        s.findingCount(),
        plan.auto(),
        plan.requestedAt(),
        s.endedAt(),
        s.reason());
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(Checkpointed.class, State::onCheckpointed)
        .onEvent(Ended.class, State::onEnded)
        .build();
  }
}

package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.governor.GovernorView;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.SingletonActor;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;
import org.apache.pekko.stream.UniqueKillSwitch;

/**
 * The run coordinator: a cluster singleton, event-sourced with snapshots, that creates runs
 * idempotently, starts a {@link RunDispatcher} for every running run, enforces deadlines, and
 * records how each run ended. On failover it recovers from the journal and starts the dispatchers
 * of the runs still RUNNING again; they resume from the {@code run_item} table.
 */
public final class RunCoordinator
    extends EventSourcedBehaviorWithEnforcedReplies<
        RunCoordinator.Command, RunCoordinator.Event, RunCoordinator.State> {

  public static final PersistenceId PERSISTENCE_ID = PersistenceId.ofUniqueId("RunCoordinator");

  /** Starts (or connects to) the singleton; the returned ref is a proxy on every node. */
  public static ActorRef<Command> initSingleton(
      ActorSystem<?> system, RunDispatcher.Dependencies deps) {
    return ClusterSingleton.get(system)
        .init(
            SingletonActor.of(
                Behaviors.supervise(create(deps))
                    .onFailure(
                        SupervisorStrategy.restartWithBackoff(
                            Duration.ofMillis(200), Duration.ofSeconds(10), 0.2)),
                "run-coordinator"));
  }

  public static Behavior<Command> create(RunDispatcher.Dependencies deps) {
    return Behaviors.setup(
        ctx -> Behaviors.withTimers(timers -> new RunCoordinator(ctx, timers, deps)));
  }

  // --- protocol ----------------------------------------------------------------------------------

  public sealed interface Command extends CborSerializable {}

  /** Creates the run, or returns it when it exists with the same parameters. */
  public record CreateRun(
      RunRequest request,
      String scopeId,
      long itemCount,
      String scopeDigest,
      ActorRef<CreateReply> replyTo)
      implements Command {}

  public record GetRun(String runId, ActorRef<RunLookup> replyTo) implements Command {}

  public record ListRuns(ActorRef<RunList> replyTo) implements Command {}

  public record ResumeRun(String runId, Instant newDeadline, ActorRef<ControlReply> replyTo)
      implements Command {}

  public record CancelRun(String runId, ActorRef<ControlReply> replyTo) implements Command {}

  /** New cluster-wide governor limits: journaled, then pushed to every running dispatcher. */
  public record SetGovernor(GovernorSettings settings, ActorRef<GovernorReply> replyTo)
      implements Command {}

  public record GetGovernor(ActorRef<GovernorReply> replyTo) implements Command {}

  /** The limits in force, and each running run's current decision. */
  public record GovernorReply(GovernorSettings settings, Map<String, GovernorView> runs)
      implements CborSerializable {}

  record Tick() implements Command {}

  record ProgressReported(RunDispatcher.ProgressReport report) implements Command {}

  record DispatcherFinished(RunDispatcher.Finished finished) implements Command {}

  /** The run's counters have read the journal to its end (or could not): the run may end. */
  record CountersFinal(RunDispatcher.Finished finished, Throwable failure) implements Command {}

  /** Why a dispatcher is failing (sent by it, just before it stops). */
  record DispatcherCrashed(String runId, int incarnation, String cause) implements Command {}

  /** A dispatcher stopped that nobody stopped: its run has nobody dispatching it. */
  record DispatcherStopped(String runId, int incarnation) implements Command {}

  record RestartDispatcher(String runId) implements Command {}

  /** Tagged item events read from the journal; the reply is the offset now counted up to. */
  record SignalsRead(List<SignalProjection.Signal> signals, ActorRef<Long> replyTo)
      implements Command {}

  public sealed interface CreateReply extends CborSerializable {}

  public record Created(RunView run) implements CreateReply {}

  public record AlreadyExists(RunView run) implements CreateReply {}

  public record Conflict(String message, RunView existing) implements CreateReply {}

  public record RunLookup(RunView run) implements CborSerializable {}

  public record RunList(List<RunView> runs) implements CborSerializable {}

  public sealed interface ControlReply extends CborSerializable {}

  public record ControlAccepted(RunView run) implements ControlReply {}

  public record ControlRefused(String error, String message) implements ControlReply {}

  // --- events and state --------------------------------------------------------------------------

  public sealed interface Event extends CborSerializable {}

  public record RunCreated(
      RunRequest request, String scopeId, long itemCount, String scopeDigest, Instant at)
      implements Event {}

  public record RunEnded(
      String runId, RunState state, RunProgress progress, String reason, Instant at)
      implements Event {}

  public record RunResumed(String runId, Instant newDeadline, Instant at) implements Event {}

  public record CancelRequested(String runId, Instant at) implements Event {}

  public record GovernorChanged(GovernorSettings settings, Instant at) implements Event {}

  /** The runs' counters grew by {@code deltas}, from the journal up to {@code offset}. */
  public record SignalsCounted(long offset, Map<String, RunSignals> deltas, Instant at)
      implements Event {}

  /**
   * {@code governor} is null until an operator changes the limits: the node's defaults apply.
   * {@code signals} are the runs' counters, counted from the journal up to {@code signalOffset}.
   */
  public record State(
      Map<String, RunRecord> runs,
      GovernorSettings governor,
      Map<String, RunSignals> signals,
      long signalOffset)
      implements CborSerializable {

    public State {
      // a snapshot taken before the counters existed has neither
      signals = signals == null ? Map.of() : signals;
    }

    State with(RunRecord record) {
      Map<String, RunRecord> next = new TreeMap<>(runs);
      next.put(record.runId(), record);
      return new State(next, governor, signals, signalOffset);
    }

    RunSignals signalsOf(String runId) {
      return signals.getOrDefault(runId, RunSignals.NONE);
    }

    State onSignalsCounted(SignalsCounted e) {
      Map<String, RunSignals> next = new TreeMap<>(signals);
      e.deltas().forEach((runId, delta) -> next.merge(runId, delta, RunSignals::plus));
      return new State(runs, governor, next, e.offset());
    }

    State onCreated(RunCreated e) {
      return with(
          RunRecord.created(e.request(), e.scopeId(), e.itemCount(), e.scopeDigest(), e.at()));
    }

    State onEnded(RunEnded e) {
      return with(runs.get(e.runId()).ended(e.state(), e.progress(), e.reason(), e.at()));
    }

    State onResumed(RunResumed e) {
      return with(runs.get(e.runId()).resumed(e.newDeadline()));
    }

    State onCancelRequested(CancelRequested e) {
      return with(runs.get(e.runId()).withCancelRequested());
    }

    State onGovernorChanged(GovernorChanged e) {
      return new State(runs, e.settings(), signals, signalOffset);
    }
  }

  // --- behaviour ---------------------------------------------------------------------------------

  private final ActorContext<Command> ctx;
  private final Clock clock;
  private final GovernorSettings defaultGovernor;
  private final RunDispatchers dispatchers;
  private final TimerScheduler<Command> timers;
  private UniqueKillSwitch projection;
  // runs whose counters are reading the journal to its end before the run ends
  private final Set<String> finishing = new HashSet<>();

  private RunCoordinator(
      ActorContext<Command> ctx, TimerScheduler<Command> timers, RunDispatcher.Dependencies deps) {
    super(PERSISTENCE_ID);
    this.ctx = ctx;
    this.timers = timers;
    this.clock = deps.clock();
    this.defaultGovernor = deps.governor();
    this.dispatchers =
        new RunDispatchers(
            ctx,
            deps,
            ctx.messageAdapter(RunDispatcher.ProgressReport.class, ProgressReported::new),
            ctx.messageAdapter(RunDispatcher.Finished.class, DispatcherFinished::new));
    timers.startTimerWithFixedDelay(new Tick(), Duration.ofMillis(250));
  }

  @Override
  public State emptyState() {
    return new State(new TreeMap<>(), null, Map.of(), 0);
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    // bounded recovery: a snapshot every 100 events, two kept
    return RetentionCriteria.snapshotEvery(100, 2);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), this::onRecovered)
        .onSignal(PostStop.instance(), state -> stopProjection())
        .onSignal(PreRestart.instance(), state -> stopProjection())
        .build();
  }

  private void stopProjection() {
    if (projection != null) {
      projection.shutdown();
    }
  }

  /** Continues where the previous coordinator stopped: the items are the truth. */
  private void onRecovered(State state) {
    projection = SignalProjection.start(ctx.getSystem(), state.signalOffset(), ctx.getSelf());
    for (RunRecord run : state.runs().values()) {
      if (run.state() == RunState.RUNNING) {
        dispatchers.start(run, run.resumes() > 0, governor(state));
        if (run.cancelRequested()) {
          dispatchers.tell(run.runId(), new RunDispatcher.Stop("cancelled", true));
        }
      }
    }
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(CreateRun.class, this::onCreate)
        .onCommand(GetRun.class, this::onGet)
        .onCommand(ListRuns.class, this::onList)
        .onCommand(ResumeRun.class, this::onResume)
        .onCommand(CancelRun.class, this::onCancel)
        .onCommand(SetGovernor.class, this::onSetGovernor)
        .onCommand(
            GetGovernor.class, (state, cmd) -> Effect().reply(cmd.replyTo(), governorReply(state)))
        .onCommand(Tick.class, this::onTick)
        .onCommand(ProgressReported.class, this::onProgress)
        .onCommand(DispatcherFinished.class, this::onFinished)
        .onCommand(CountersFinal.class, this::onCountersFinal)
        .onCommand(
            DispatcherCrashed.class,
            (state, crashed) -> {
              dispatchers.crashed(crashed.runId(), crashed.incarnation(), crashed.cause());
              return Effect().noReply();
            })
        .onCommand(DispatcherStopped.class, this::onDispatcherStopped)
        .onCommand(RestartDispatcher.class, this::onRestartDispatcher)
        .onCommand(SignalsRead.class, this::onSignalsRead)
        .build();
  }

  private ReplyEffect<Event, State> onCreate(State state, CreateRun cmd) {
    RunRequest request = cmd.request();
    RunRecord existing = state.runs().get(request.runId());
    if (existing != null) {
      List<String> differences = existing.request().differencesFrom(request);
      // a null digest: the caller did not read the scope again (same file or query named)
      if (cmd.scopeDigest() != null
          && !existing.scopeDigest().equals(cmd.scopeDigest())
          && !differences.contains("scope")) {
        differences.add("scope contents (the accounts are not the same)");
      }
      if (differences.isEmpty()) {
        return Effect().reply(cmd.replyTo(), new AlreadyExists(view(state, existing)));
      }
      return Effect()
          .reply(
              cmd.replyTo(),
              new Conflict(
                  "run "
                      + request.runId()
                      + " already exists with different parameters: "
                      + String.join(", ", differences),
                  view(state, existing)));
    }
    if (cmd.scopeId() == null) {
      return Effect()
          .reply(
              cmd.replyTo(),
              new Conflict(
                  "run " + request.runId() + " has no staged scope; create it again", null));
    }
    RunCreated created =
        new RunCreated(request, cmd.scopeId(), cmd.itemCount(), cmd.scopeDigest(), clock.instant());
    return Effect()
        .persist(created)
        .thenRun(
            s -> {
              RunRecord run = s.runs().get(request.runId());
              ctx.getLog()
                  .info(
                      "run {} created: {} items, deadline {}",
                      run.runId(),
                      run.itemCount(),
                      run.deadline());
              dispatchers.start(run, false, governor(s));
            })
        .thenReply(cmd.replyTo(), s -> new Created(view(s, s.runs().get(request.runId()))));
  }

  private ReplyEffect<Event, State> onGet(State state, GetRun cmd) {
    RunRecord run = state.runs().get(cmd.runId());
    return Effect().reply(cmd.replyTo(), new RunLookup(run == null ? null : view(state, run)));
  }

  private ReplyEffect<Event, State> onList(State state, ListRuns cmd) {
    return Effect()
        .reply(
            cmd.replyTo(),
            new RunList(state.runs().values().stream().map(run -> view(state, run)).toList()));
  }

  private ReplyEffect<Event, State> onResume(State state, ResumeRun cmd) {
    RunRecord run = state.runs().get(cmd.runId());
    if (run == null) {
      return Effect().reply(cmd.replyTo(), unknownRun(cmd.runId()));
    }
    if (cmd.newDeadline() == null || !cmd.newDeadline().isAfter(clock.instant())) {
      return refuse(cmd.replyTo(), "invalid_deadline", "the new deadline must be in the future");
    }
    if (run.state() == RunState.RUNNING) {
      return refuse(cmd.replyTo(), "run_running", "run " + run.runId() + " is still RUNNING");
    }
    if (run.state() == RunState.SUCCEEDED) {
      return refuse(
          cmd.replyTo(), "run_succeeded", "run " + run.runId() + " SUCCEEDED: nothing to resume");
    }
    return Effect()
        .persist(new RunResumed(run.runId(), cmd.newDeadline(), clock.instant()))
        .thenRun(
            s -> {
              RunRecord resumed = s.runs().get(run.runId());
              ctx.getLog().info("run {} resumed with deadline {}", run.runId(), resumed.deadline());
              dispatchers.start(resumed, true, governor(s));
            })
        .thenReply(cmd.replyTo(), s -> new ControlAccepted(view(s, s.runs().get(run.runId()))));
  }

  private ReplyEffect<Event, State> onCancel(State state, CancelRun cmd) {
    RunRecord run = state.runs().get(cmd.runId());
    if (run == null) {
      return Effect().reply(cmd.replyTo(), unknownRun(cmd.runId()));
    }
    if (run.state() != RunState.RUNNING) {
      return refuse(
          cmd.replyTo(), "run_ended", "run " + run.runId() + " already ended " + run.state());
    }
    return Effect()
        .persist(new CancelRequested(run.runId(), clock.instant()))
        .thenRun(s -> dispatchers.tell(run.runId(), new RunDispatcher.Stop("cancelled", true)))
        .thenReply(cmd.replyTo(), s -> new ControlAccepted(view(s, s.runs().get(run.runId()))));
  }

  private ReplyEffect<Event, State> onSetGovernor(State state, SetGovernor cmd) {
    return Effect()
        .persist(new GovernorChanged(cmd.settings(), clock.instant()))
        .thenRun(
            s -> {
              ctx.getLog().info("governor limits changed to {}", cmd.settings());
              dispatchers.tellAll(new RunDispatcher.ChangeGovernor(cmd.settings()));
            })
        .thenReply(cmd.replyTo(), this::governorReply);
  }

  private GovernorReply governorReply(State state) {
    Map<String, GovernorView> views = new TreeMap<>();
    state.runs().values().stream()
        .filter(run -> run.state() == RunState.RUNNING)
        .forEach(
            run ->
                dispatchers
                    .progressOf(run.runId())
                    .filter(p -> p.governor() != null)
                    .ifPresent(p -> views.put(run.runId(), p.governor())));
    return new GovernorReply(governor(state), views);
  }

  private GovernorSettings governor(State state) {
    return state.governor() != null ? state.governor() : defaultGovernor;
  }

  /** The deadline: repeated every tick until the run ends, since Stop is idempotent. */
  private ReplyEffect<Event, State> onTick(State state, Tick tick) {
    Instant now = clock.instant();
    for (RunRecord run : state.runs().values()) {
      if (run.state() == RunState.RUNNING && !now.isBefore(run.deadline())) {
        dispatchers.tell(
            run.runId(), new RunDispatcher.Stop("deadline " + run.deadline() + " passed", false));
      }
    }
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onProgress(State state, ProgressReported reported) {
    dispatchers.reported(reported.report());
    return Effect().noReply();
  }

  /**
   * Every item of the run is settled; before the run ends, its counters read the journal to its
   * end, so a run that shows as ended shows its final counters (docs/design.md, "Observability").
   */
  private ReplyEffect<Event, State> onFinished(State state, DispatcherFinished message) {
    RunDispatcher.Finished finished = message.finished();
    RunRecord run = state.runs().get(finished.runId());
    if (run == null || run.state() != RunState.RUNNING || !finishing.add(finished.runId())) {
      return Effect().noReply();
    }
    ctx.pipeToSelf(
        SignalProjection.catchUp(ctx.getSystem(), state.signalOffset(), ctx.getSelf())
            .toCompletableFuture()
            .orTimeout(30, TimeUnit.SECONDS),
        (done, failure) -> new CountersFinal(finished, failure));
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onCountersFinal(State state, CountersFinal message) {
    RunDispatcher.Finished finished = message.finished();
    finishing.remove(finished.runId());
    if (message.failure() != null) {
      // the live projection still counts them; the run must not wait on the journal's reader
      ctx.getLog()
          .warn(
              "run {}: counters not read to the journal's end before it ended: {}",
              finished.runId(),
              summary(message.failure()));
    }
    RunRecord run = state.runs().get(finished.runId());
    if (run == null || run.state() != RunState.RUNNING) {
      return Effect().noReply();
    }
    return Effect()
        .persist(
            new RunEnded(
                finished.runId(),
                finished.state(),
                finished.progress(),
                finished.reason(),
                clock.instant()))
        .thenRun(
            s -> {
              ctx.getLog()
                  .info(
                      "run {} ended {}: {} ({})",
                      finished.runId(),
                      finished.state(),
                      finished.progress().counts(),
                      finished.reason());
              dispatchers.stop(finished.runId());
            })
        .thenNoReply();
  }

  /**
   * A failed dispatcher is started again from the journaled run after a back-off; after {@link
   * RunDispatchers#MAX_FAILURES} failures the run ends FAILED with the reason, so it is never left
   * RUNNING with nobody dispatching it.
   */
  private ReplyEffect<Event, State> onDispatcherStopped(State state, DispatcherStopped stopped) {
    var failure = dispatchers.stopped(stopped.runId(), stopped.incarnation());
    if (failure.isEmpty()) {
      return Effect().noReply();
    }
    RunRecord run = state.runs().get(failure.get().runId());
    if (run == null || run.state() != RunState.RUNNING) {
      return Effect().noReply();
    }
    int count = failure.get().count();
    if (count < RunDispatchers.MAX_FAILURES) {
      ctx.getLog()
          .warn(
              "run {}: dispatcher failed ({}), starting it again ({} of {})",
              run.runId(),
              failure.get().cause(),
              count,
              RunDispatchers.MAX_FAILURES);
      timers.startSingleTimer(
          "restart-" + run.runId(), new RestartDispatcher(run.runId()), Duration.ofSeconds(count));
      return Effect().noReply();
    }
    String reason =
        "the dispatcher failed " + count + " times; the last failure: " + failure.get().cause();
    ctx.getLog().error("run {}: {}", run.runId(), reason);
    return Effect()
        .persist(
            new RunEnded(
                run.runId(),
                RunState.FAILED,
                dispatchers.progressOf(run.runId()).orElse(RunProgress.initial(run.itemCount())),
                reason,
                clock.instant()))
        .thenNoReply();
  }

  private ReplyEffect<Event, State> onRestartDispatcher(State state, RestartDispatcher restart) {
    RunRecord run = state.runs().get(restart.runId());
    if (run != null && run.state() == RunState.RUNNING && !dispatchers.isRunning(run.runId())) {
      dispatchers.start(run, run.resumes() > 0, governor(state));
      if (run.cancelRequested()) {
        dispatchers.tell(run.runId(), new RunDispatcher.Stop("cancelled", true));
      }
    }
    return Effect().noReply();
  }

  /** A failure as one line for the log and the run view: its kind and message, never a trace. */
  static String summary(Throwable cause) {
    String text = cause.getClass().getSimpleName() + ": " + cause.getMessage();
    return text.length() <= 300 ? text : text.substring(0, 300);
  }

  /**
   * Adds what the journal says to the runs' counters (each event once: the offset it was counted up
   * to is persisted with them), and passes it on to the running runs' governors.
   */
  private ReplyEffect<Event, State> onSignalsRead(State state, SignalsRead read) {
    Map<String, RunSignals> deltas = new TreeMap<>();
    long offset = state.signalOffset();
    for (SignalProjection.Signal signal : read.signals()) {
      if (signal.offset() > state.signalOffset() && signal.runId() != null) {
        deltas.merge(signal.runId(), signal.delta(), RunSignals::plus);
      }
      offset = Math.max(offset, signal.offset());
    }
    if (offset == state.signalOffset()) {
      return Effect().reply(read.replyTo(), state.signalOffset());
    }
    return Effect()
        .persist(new SignalsCounted(offset, deltas, clock.instant()))
        .thenRun(
            s ->
                deltas.forEach(
                    (runId, delta) ->
                        dispatchers.tell(runId, new RunDispatcher.SignalsSeen(delta))))
        .thenReply(read.replyTo(), State::signalOffset);
  }

  private ReplyEffect<Event, State> refuse(
      ActorRef<ControlReply> replyTo, String error, String message) {
    return Effect().reply(replyTo, new ControlRefused(error, message));
  }

  private static ControlRefused unknownRun(String runId) {
    return new ControlRefused("unknown_run", "no run " + runId);
  }

  private RunView view(State state, RunRecord run) {
    return RunView.of(
        run, dispatchers.progressOf(run.runId()).orElse(null), state.signalsOf(run.runId()));
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(RunCreated.class, State::onCreated)
        .onEvent(RunEnded.class, State::onEnded)
        .onEvent(RunResumed.class, State::onResumed)
        .onEvent(CancelRequested.class, State::onCancelRequested)
        .onEvent(GovernorChanged.class, State::onGovernorChanged)
        .onEvent(SignalsCounted.class, State::onSignalsCounted)
        .build();
  }
}

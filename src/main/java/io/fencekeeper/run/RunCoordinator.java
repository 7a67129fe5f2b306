package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.worker.GovernorPolicy;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
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

/**
 * The run coordinator: a cluster singleton, event-sourced with snapshots, that creates runs
 * idempotently, starts a {@link RunDispatcher} for every running run, enforces deadlines, and
 * records how each run ended. On failover it recovers from the journal and restarts the dispatchers
 * of the runs still RUNNING; they resume from the {@code run_item} table.
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
  public record SetGovernor(GovernorPolicy.Settings settings, ActorRef<GovernorReply> replyTo)
      implements Command {}

  public record GetGovernor(ActorRef<GovernorReply> replyTo) implements Command {}

  /** The limits in force, and each running run's current decision. */
  public record GovernorReply(
      GovernorPolicy.Settings settings, Map<String, RunProgress.GovernorView> runs)
      implements CborSerializable {}

  record Tick() implements Command {}

  record ProgressReported(RunDispatcher.Report report) implements Command {}

  record DispatcherFinished(RunDispatcher.Outcome outcome) implements Command {}

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

  public record GovernorChanged(GovernorPolicy.Settings settings, Instant at) implements Event {}

  /** One run as the coordinator remembers it. */
  public record RunRecord(
      RunRequest request,
      String scopeId,
      long itemCount,
      String scopeDigest,
      RunState state,
      Instant createdAt,
      Instant deadline,
      Instant endedAt,
      String endReason,
      RunProgress finalProgress,
      boolean cancelRequested,
      int resumes)
      implements CborSerializable {

    public String runId() {
      return request.runId();
    }

    RunRecord ended(RunEnded e) {
      return new RunRecord(
          request,
          scopeId,
          itemCount,
          scopeDigest,
          e.state(),
          createdAt,
          deadline,
          e.at(),
          e.reason(),
          e.progress(),
          false,
          resumes);
    }

    RunRecord resumed(RunResumed e) {
      return new RunRecord(
          request,
          scopeId,
          itemCount,
          scopeDigest,
          RunState.RUNNING,
          createdAt,
          e.newDeadline(),
          null,
          null,
          null,
          false,
          resumes + 1);
    }

    RunRecord withCancelRequested() {
      return new RunRecord(
          request,
          scopeId,
          itemCount,
          scopeDigest,
          state,
          createdAt,
          deadline,
          endedAt,
          endReason,
          finalProgress,
          true,
          resumes);
    }
  }

  /** {@code governor} is null until an operator changes the limits: the node's defaults apply. */
  public record State(Map<String, RunRecord> runs, GovernorPolicy.Settings governor)
      implements CborSerializable {
    State with(RunRecord record) {
      Map<String, RunRecord> next = new TreeMap<>(runs);
      next.put(record.runId(), record);
      return new State(next, governor);
    }

    State withGovernor(GovernorPolicy.Settings settings) {
      return new State(runs, settings);
    }
  }

  // --- behaviour ---------------------------------------------------------------------------------

  private final ActorContext<Command> ctx;
  private final RunDispatcher.Dependencies deps;
  private final Clock clock;
  private final Map<String, ActorRef<RunDispatcher.Command>> dispatchers = new HashMap<>();
  private final Map<String, RunProgress> progress = new HashMap<>();
  private final GovernorPolicy.Settings defaultGovernor;
  private final ActorRef<RunDispatcher.Report> progressAdapter;
  private final ActorRef<RunDispatcher.Outcome> outcomeAdapter;

  private RunCoordinator(
      ActorContext<Command> ctx, TimerScheduler<Command> timers, RunDispatcher.Dependencies deps) {
    super(PERSISTENCE_ID);
    this.ctx = ctx;
    this.deps = deps;
    this.clock = deps.clock();
    this.defaultGovernor = deps.governor();
    this.progressAdapter = ctx.messageAdapter(RunDispatcher.Report.class, ProgressReported::new);
    this.outcomeAdapter = ctx.messageAdapter(RunDispatcher.Outcome.class, DispatcherFinished::new);
    timers.startTimerWithFixedDelay(new Tick(), Duration.ofMillis(250));
  }

  @Override
  public State emptyState() {
    return new State(new TreeMap<>(), null);
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    // bounded recovery: a snapshot every 100 events, two kept
    return RetentionCriteria.snapshotEvery(100, 2);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(
            RecoveryCompleted.instance(),
            state -> {
              for (RunRecord run : state.runs().values()) {
                if (run.state() == RunState.RUNNING) {
                  // continue where the previous coordinator stopped: the items are the truth
                  startDispatcher(run, run.resumes() > 0, governor(state));
                  if (run.cancelRequested()) {
                    dispatchers.get(run.runId()).tell(new RunDispatcher.Stop("cancelled", true));
                  }
                }
              }
            })
        .build();
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(CreateRun.class, this::onCreate)
        .onCommand(
            GetRun.class, (state, cmd) -> Effect().reply(cmd.replyTo(), lookup(state, cmd.runId())))
        .onCommand(
            ListRuns.class,
            (state, cmd) ->
                Effect()
                    .reply(
                        cmd.replyTo(),
                        new RunList(state.runs().values().stream().map(this::view).toList())))
        .onCommand(ResumeRun.class, this::onResume)
        .onCommand(CancelRun.class, this::onCancel)
        .onCommand(SetGovernor.class, this::onSetGovernor)
        .onCommand(
            GetGovernor.class, (state, cmd) -> Effect().reply(cmd.replyTo(), governorReply(state)))
        .onCommand(Tick.class, this::onTick)
        .onCommand(ProgressReported.class, this::onProgress)
        .onCommand(DispatcherFinished.class, this::onFinished)
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
        return Effect().reply(cmd.replyTo(), new AlreadyExists(view(existing)));
      }
      return Effect()
          .reply(
              cmd.replyTo(),
              new Conflict(
                  "run "
                      + request.runId()
                      + " already exists with different parameters: "
                      + String.join(", ", differences),
                  view(existing)));
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
              startDispatcher(run, false, governor(s));
            })
        .thenReply(cmd.replyTo(), s -> new Created(view(s.runs().get(request.runId()))));
  }

  private ReplyEffect<Event, State> onResume(State state, ResumeRun cmd) {
    RunRecord run = state.runs().get(cmd.runId());
    if (run == null) {
      return Effect().reply(cmd.replyTo(), unknownRun(cmd.runId()));
    }
    if (cmd.newDeadline() == null || !cmd.newDeadline().isAfter(clock.instant())) {
      return Effect()
          .reply(
              cmd.replyTo(),
              new ControlRefused("invalid_deadline", "the new deadline must be in the future"));
    }
    if (run.state() == RunState.RUNNING) {
      return Effect()
          .reply(
              cmd.replyTo(),
              new ControlRefused("run_running", "run " + run.runId() + " is still RUNNING"));
    }
    if (run.state() == RunState.SUCCEEDED) {
      return Effect()
          .reply(
              cmd.replyTo(),
              new ControlRefused(
                  "run_succeeded", "run " + run.runId() + " SUCCEEDED: nothing to resume"));
    }
    return Effect()
        .persist(new RunResumed(run.runId(), cmd.newDeadline(), clock.instant()))
        .thenRun(
            s -> {
              RunRecord resumed = s.runs().get(run.runId());
              ctx.getLog().info("run {} resumed with deadline {}", run.runId(), resumed.deadline());
              progress.remove(run.runId());
              startDispatcher(resumed, true, governor(s));
            })
        .thenReply(cmd.replyTo(), s -> new ControlAccepted(view(s.runs().get(run.runId()))));
  }

  private ReplyEffect<Event, State> onCancel(State state, CancelRun cmd) {
    RunRecord run = state.runs().get(cmd.runId());
    if (run == null) {
      return Effect().reply(cmd.replyTo(), unknownRun(cmd.runId()));
    }
    if (run.state() != RunState.RUNNING) {
      return Effect()
          .reply(
              cmd.replyTo(),
              new ControlRefused(
                  "run_ended", "run " + run.runId() + " already ended " + run.state()));
    }
    return Effect()
        .persist(new CancelRequested(run.runId(), clock.instant()))
        .thenRun(
            s -> {
              ActorRef<RunDispatcher.Command> dispatcher = dispatchers.get(run.runId());
              if (dispatcher != null) {
                dispatcher.tell(new RunDispatcher.Stop("cancelled", true));
              }
            })
        .thenReply(cmd.replyTo(), s -> new ControlAccepted(view(s.runs().get(run.runId()))));
  }

  private ReplyEffect<Event, State> onSetGovernor(State state, SetGovernor cmd) {
    return Effect()
        .persist(new GovernorChanged(cmd.settings(), clock.instant()))
        .thenRun(
            s -> {
              ctx.getLog().info("governor limits changed to {}", cmd.settings());
              dispatchers
                  .values()
                  .forEach(d -> d.tell(new RunDispatcher.GovernorChanged(cmd.settings())));
            })
        .thenReply(cmd.replyTo(), this::governorReply);
  }

  private GovernorReply governorReply(State state) {
    Map<String, RunProgress.GovernorView> views = new TreeMap<>();
    state.runs().values().stream()
        .filter(run -> run.state() == RunState.RUNNING)
        .forEach(
            run -> {
              RunProgress p = progress.get(run.runId());
              if (p != null && p.governor() != null) {
                views.put(run.runId(), p.governor());
              }
            });
    return new GovernorReply(governor(state), views);
  }

  private GovernorPolicy.Settings governor(State state) {
    return state.governor() != null ? state.governor() : defaultGovernor;
  }

  private ReplyEffect<Event, State> onTick(State state, Tick tick) {
    Instant now = clock.instant();
    for (RunRecord run : state.runs().values()) {
      if (run.state() == RunState.RUNNING && !now.isBefore(run.deadline())) {
        ActorRef<RunDispatcher.Command> dispatcher = dispatchers.get(run.runId());
        if (dispatcher != null) {
          // repeated every tick until the run ends: Stop is idempotent
          dispatcher.tell(new RunDispatcher.Stop("deadline " + run.deadline() + " passed", false));
        }
      }
    }
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onProgress(State state, ProgressReported reported) {
    progress.put(reported.report().runId(), reported.report().progress());
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onFinished(State state, DispatcherFinished finished) {
    RunDispatcher.Outcome outcome = finished.outcome();
    RunRecord run = state.runs().get(outcome.runId());
    if (run == null || run.state() != RunState.RUNNING) {
      return Effect().noReply();
    }
    return Effect()
        .persist(
            new RunEnded(
                outcome.runId(),
                outcome.state(),
                outcome.progress(),
                outcome.reason(),
                clock.instant()))
        .thenRun(
            s -> {
              ctx.getLog()
                  .info(
                      "run {} ended {}: {} ({})",
                      outcome.runId(),
                      outcome.state(),
                      outcome.progress().counts(),
                      outcome.reason());
              progress.put(outcome.runId(), outcome.progress());
              ActorRef<RunDispatcher.Command> dispatcher = dispatchers.remove(outcome.runId());
              if (dispatcher != null) {
                ctx.stop(dispatcher);
              }
            })
        .thenNoReply();
  }

  private void startDispatcher(
      RunRecord run, boolean resume, GovernorPolicy.Settings governorSettings) {
    ActorRef<RunDispatcher.Command> previous = dispatchers.remove(run.runId());
    if (previous != null) {
      ctx.stop(previous);
    }
    String name =
        "dispatcher-"
            + URLEncoder.encode(run.runId(), StandardCharsets.UTF_8)
            + "-"
            + run.resumes();
    dispatchers.put(
        run.runId(),
        ctx.spawn(
            RunDispatcher.create(
                run, resume, governorSettings, deps, progressAdapter, outcomeAdapter),
            name));
  }

  private RunLookup lookup(State state, String runId) {
    RunRecord run = state.runs().get(runId);
    return new RunLookup(run == null ? null : view(run));
  }

  private static ControlRefused unknownRun(String runId) {
    return new ControlRefused("unknown_run", "no run " + runId);
  }

  private RunView view(RunRecord run) {
    RunProgress p = run.finalProgress();
    if (run.state() == RunState.RUNNING || p == null) {
      p = progress.getOrDefault(run.runId(), RunProgress.initial(run.itemCount()));
    }
    return new RunView(
        run.runId(),
        run.request().job(),
        run.request().businessDate().toString(),
        run.state(),
        run.createdAt(),
        run.deadline(),
        run.endedAt(),
        run.endReason(),
        run.request().maxAttempts(),
        run.request().maxFailedItems(),
        run.resumes(),
        p.counts(),
        p.backlogAgeSeconds(),
        p.itemsPerSecond(),
        p.projectedFinish(),
        p.staleRejections(),
        p.leaseExpiries(),
        p.reconciliations(),
        p.throttledAnswers(),
        p.governor());
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(
            RunCreated.class,
            (state, e) ->
                state.with(
                    new RunRecord(
                        e.request(),
                        e.scopeId(),
                        e.itemCount(),
                        e.scopeDigest(),
                        RunState.RUNNING,
                        e.at(),
                        e.request().deadline(),
                        null,
                        null,
                        null,
                        false,
                        0)))
        .onEvent(RunEnded.class, (state, e) -> state.with(state.runs().get(e.runId()).ended(e)))
        .onEvent(RunResumed.class, (state, e) -> state.with(state.runs().get(e.runId()).resumed(e)))
        .onEvent(
            CancelRequested.class,
            (state, e) -> state.with(state.runs().get(e.runId()).withCancelRequested()))
        .onEvent(GovernorChanged.class, (state, e) -> state.withGovernor(e.settings()))
        .build();
  }
}

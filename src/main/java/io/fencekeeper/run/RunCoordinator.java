package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.dispatch.DispatchProtocol;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.FleetView;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.governor.GovernorView;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.BackoffSupervisorStrategy;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.SingletonActor;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * The run coordinator: a cluster singleton, event-sourced with snapshots, that keeps the runs, not
 * their items (docs/design.md, "Runs and the coordinator"). It creates runs idempotently, hands
 * every running run to every node that hosts item shards with that node's slice of the run's cap
 * ({@link LiveRuns}: each node dispatches the items it hosts), steers each run's governor and share
 * of its provider's budget, enforces deadlines, closes what is open when a run stops, and records
 * how each run ended, counted once per item from {@code run_item}. On failover it recovers from the
 * journal and takes the runs still RUNNING up again; the nodes went on dispatching meanwhile.
 */
public final class RunCoordinator
    extends EventSourcedBehaviorWithEnforcedReplies<
        RunCoordinator.Command, RunCoordinator.Event, RunCoordinator.State> {

  public static final PersistenceId PERSISTENCE_ID = PersistenceId.ofUniqueId("RunCoordinator");

  /** How the coordinator comes back after any failure: its journal's, or its own. */
  static final BackoffSupervisorStrategy JOURNAL_FAILURE_BACKOFF =
      SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(10), 0.2);

  /** Starts (or connects to) the singleton; the returned ref is a proxy on every node. */
  public static ActorRef<Command> initSingleton(ActorSystem<?> system, Dependencies deps) {
    return ClusterSingleton.get(system)
        .init(
            SingletonActor.of(
                Behaviors.supervise(create(deps)).onFailure(JOURNAL_FAILURE_BACKOFF),
                "run-coordinator"));
  }

  /**
   * What the coordinator needs from the node; {@code fleet}: the bounds of the nodes wanted; {@code
   * budgets}: the provider budget keeper.
   */
  public record Dependencies(
      Clock clock,
      RunItemStore store,
      EndedRuns ended,
      ItemGateway items,
      ItemShards shards,
      Executor blocking,
      GovernorSettings governor,
      FleetPolicy.Settings fleet,
      Optional<ActorRef<BudgetKeeper.Command>> budgets) {}

  public static Behavior<Command> create(Dependencies deps) {
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

  /** The nodes the fleet wants now, and why (docs/cluster.md, "The fleet follows the window"). */
  public record GetFleet(ActorRef<FleetView> replyTo) implements Command {}

  /** The limits in force, and each running run's current decision. */
  public record GovernorReply(GovernorSettings settings, Map<String, GovernorView> runs)
      implements CborSerializable {}

  /**
   * Retention asks to prune an ended run (docs/design.md, "Retention and the archive"): allowed
   * unless the coordinator holds the run (resumed, or ended and not filed yet). Once allowed the
   * run can no longer be resumed; the claim is journaled, so a coordinator that moves keeps it.
   */
  public record BeginPruning(String runId, ActorRef<PruningReply> replyTo) implements Command {}

  /** The run's rows are gone and its record says so: the claim is no longer needed. */
  public record EndPruning(String runId, ActorRef<PruningReply> replyTo) implements Command {}

  /** The runs claimed for pruning and not ended: a pass that died left them half-way. */
  public record GetPruning(ActorRef<PruningClaims> replyTo) implements Command {}

  public sealed interface PruningReply extends CborSerializable {}

  public record PruningAllowed(String runId) implements PruningReply {}

  public record PruningRefused(String runId, String reason) implements PruningReply {}

  public record PruningClaims(Set<String> runIds) implements CborSerializable {}

  record Tick() implements Command {}

  record IdleTick() implements Command {}

  /** Every node that hosts item shards, as the receptionist lists their agents. */
  record AgentsChanged(Set<ActorRef<DispatchProtocol.ToAgent>> agents) implements Command {}

  /** A member left the cluster: its slices are void, its shards are woken elsewhere. */
  record MemberRemoved(org.apache.pekko.actor.Address member) implements Command {}

  /** A node's report of what it dispatched. */
  record NodeReported(DispatchProtocol.NodeReport report) implements Command {}

  /** The run's share of its provider's budget, from the budget keeper. */
  record ShareGranted(BudgetKeeper.Share share) implements Command {}

  /** How many items each shard of a run has ({@code failure}: the count could not be read). */
  record ShardsCounted(
      String runId, int resumes, RunItemStore.ShardFigures figures, Throwable failure)
      implements Command {}

  /** The close sweep of a stopping run closed what was open. */
  record SweepFinished(String runId, int resumes) implements Command {}

  /** A run's items counted by their status in {@code run_item}: maybe its final count. */
  record ItemsCounted(String runId, int resumes, Map<Short, Long> counts, Throwable failure)
      implements Command {}

  /** A run's dispatcher kept failing on a node: the run ends FAILED with the reason. */
  record DispatchFailed(String runId, String reason) implements Command {}

  /** Ended runs written to {@code run_record}, with the counters written for each. */
  record Filed(Map<String, RunSignals> written, Throwable failure) implements Command {}

  /**
   * A command about a run the coordinator does not hold, with what {@code run_record} says of it
   * (an ended run it filed, or none).
   */
  record LookedUp(Command command, Optional<EndedRuns.Filed> filed, Throwable failure)
      implements Command {}

  /** The run's counters have read the journal to its end (or could not): the run may end. */
  record CountersFinal(
      String runId, RunState state, RunProgress progress, String reason, Throwable failure)
      implements Command {}

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

  /**
   * Ended runs filed in {@code run_record} ({@link EndedRuns}): the coordinator forgets them, so
   * its memory and snapshots hold only the runs that have not ended.
   */
  public record RunsFiled(List<String> runIds, Instant at) implements Event {}

  /** A filed run taken back (to be resumed): its record and its counters as filed. */
  public record RunUnfiled(RunRecord record, RunSignals signals, Instant at) implements Event {}

  /** Retention may prune the ended run: it can no longer be resumed. */
  public record PruningBegun(String runId, Instant at) implements Event {}

  /** Retention pruned the run: its record in {@code run_record} says where its archive is. */
  public record PruningEnded(String runId, Instant at) implements Event {}

  /** The runs' counters grew by {@code deltas}, from the journal up to {@code offset}. */
  public record SignalsCounted(long offset, Map<String, RunSignals> deltas, Instant at)
      implements Event {}

  /**
   * {@code governor} is null until an operator changes the limits: the node's defaults apply.
   * {@code signals} are the runs' counters, counted from the journal up to {@code signalOffset}.
   * {@code pruning}: filed runs retention is pruning (never one of {@code runs}).
   */
  public record State(
      Map<String, RunRecord> runs,
      GovernorSettings governor,
      Map<String, RunSignals> signals,
      long signalOffset,
      Set<String> pruning)
      implements CborSerializable {

    public State {
      // a snapshot taken before the counters (or retention) existed has neither
      signals = signals == null ? Map.of() : signals;
      pruning = pruning == null ? Set.of() : pruning;
    }

    State with(RunRecord record) {
      Map<String, RunRecord> next = new TreeMap<>(runs);
      next.put(record.runId(), record);
      return new State(next, governor, signals, signalOffset, pruning);
    }

    State withPruning(String runId, boolean claimed) {
      Set<String> next = new java.util.TreeSet<>(pruning);
      if (claimed) {
        next.add(runId);
      } else {
        next.remove(runId);
      }
      return new State(runs, governor, signals, signalOffset, next);
    }

    RunSignals signalsOf(String runId) {
      return signals.getOrDefault(runId, RunSignals.NONE);
    }

    /** Only the runs held here count here; a filed run's counters grow in {@code run_record}. */
    State onSignalsCounted(SignalsCounted e) {
      Map<String, RunSignals> next = new TreeMap<>(signals);
      e.deltas()
          .forEach(
              (runId, delta) -> {
                if (runs.containsKey(runId)) {
                  next.merge(runId, delta, RunSignals::plus);
                }
              });
      return new State(runs, governor, next, e.offset(), pruning);
    }

    State onFiled(RunsFiled e) {
      Map<String, RunRecord> nextRuns = new TreeMap<>(runs);
      Map<String, RunSignals> nextSignals = new TreeMap<>(signals);
      e.runIds().forEach(nextRuns::remove);
      e.runIds().forEach(nextSignals::remove);
      return new State(nextRuns, governor, nextSignals, signalOffset, pruning);
    }

    State onUnfiled(RunUnfiled e) {
      Map<String, RunSignals> nextSignals = new TreeMap<>(signals);
      nextSignals.put(e.record().runId(), e.signals());
      return new State(runs, governor, nextSignals, signalOffset, pruning).with(e.record());
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
      return new State(runs, e.settings(), signals, signalOffset, pruning);
    }
  }

  // --- behaviour ---------------------------------------------------------------------------------

  private final ActorContext<Command> ctx;
  private final Clock clock;
  private final Dependencies deps;
  private final LiveRuns live;
  private final CoordinatorTicks ticks;
  private final RunFiling filing;
  private final RunControl control;
  private final RunEnding ending;

  private RunCoordinator(
      ActorContext<Command> ctx, TimerScheduler<Command> timers, Dependencies deps) {
    // A write or a recovery the journal fails (its database down a few seconds) stops an
    // event-sourced actor unless it is given a back-off here: the restart around the singleton
    // never
    // sees that failure, and a stopped coordinator answered no run again (the soak, issue 50)
    super(PERSISTENCE_ID, JOURNAL_FAILURE_BACKOFF);
    this.ctx = ctx;
    this.clock = deps.clock();
    this.deps = deps;
    this.live =
        new LiveRuns(
            ctx,
            deps,
            ctx.messageAdapter(DispatchProtocol.NodeReport.class, NodeReported::new),
            ctx.messageAdapter(BudgetKeeper.Share.class, ShareGranted::new));
    ctx.getSystem()
        .receptionist()
        .tell(
            Receptionist.subscribe(
                DispatchProtocol.AGENT_KEY,
                ctx.messageAdapter(
                    Receptionist.Listing.class,
                    listing ->
                        new AgentsChanged(
                            listing.getServiceInstances(DispatchProtocol.AGENT_KEY)))));
    Cluster.get(ctx.getSystem())
        .subscriptions()
        .tell(
            Subscribe.create(
                ctx.messageAdapter(
                    ClusterEvent.MemberRemoved.class,
                    removed -> new MemberRemoved(removed.member().address())),
                ClusterEvent.MemberRemoved.class));
    this.ticks = new CoordinatorTicks(ctx, timers);
    this.filing = new RunFiling(ctx, deps);
    this.control = new RunControl(Effect(), ctx, deps, live, filing, ticks);
    this.ending = new RunEnding(Effect(), ctx, deps.clock(), live, filing);
  }

  /** A run is held: the deadline check and the counters' projection run. */
  private void wake(State state) {
    ticks.wake(state.signalOffset());
  }

  @Override
  public State emptyState() {
    return new State(new TreeMap<>(), null, Map.of(), 0, Set.of());
  }

  /**
   * Bounded recovery and a bounded journal: a snapshot every 100 events, two kept, and the events
   * before the older of them deleted (docs/design.md, "Retention and the archive"). Recovery reads
   * the latest snapshot and the events after it, never the deleted ones; what an ended run's events
   * said is in its {@code run_record} row (and its archive once pruned), so they are no audit.
   */
  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(100, 2).withDeleteEventsOnSnapshot();
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), this::onRecovered)
        .onSignal(PostStop.instance(), state -> ticks.stopProjection())
        .onSignal(PreRestart.instance(), state -> ticks.stopProjection())
        .build();
  }

  /** Continues where the previous coordinator stopped: the nodes dispatched on meanwhile. */
  private void onRecovered(State state) {
    if (!state.runs().isEmpty()) {
      wake(state);
    }
    filing.file(state); // a journal of an older version holds every run ever: filed now
    for (RunRecord run : state.runs().values()) {
      if (run.state() == RunState.RUNNING) {
        live.start(run, control.governor(state), true);
        if (run.cancelRequested()) {
          live.stop(run.runId(), new LiveRun.Stopping("cancelled", true));
        }
      }
    }
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(CreateRun.class, control::onCreate)
        .onCommand(GetRun.class, control::onGet)
        .onCommand(ListRuns.class, control::onList)
        .onCommand(ResumeRun.class, control::onResume)
        .onCommand(CancelRun.class, control::onCancel)
        .onCommand(SetGovernor.class, control::onSetGovernor)
        .onCommand(
            GetGovernor.class,
            (state, cmd) -> Effect().reply(cmd.replyTo(), control.governorReply(state)))
        .onCommand(GetFleet.class, (state, cmd) -> Effect().reply(cmd.replyTo(), live.fleet()))
        .onCommand(Tick.class, this::onTick)
        .onCommand(IdleTick.class, (state, c) -> soft(() -> ticks.idleTick(state.signalOffset())))
        .onCommand(AgentsChanged.class, (state, c) -> soft(() -> live.agents(c.agents())))
        .onCommand(NodeReported.class, (state, c) -> soft(() -> live.reported(c.report())))
        .onCommand(MemberRemoved.class, (state, c) -> soft(() -> live.removed(c.member())))
        .onCommand(ShareGranted.class, (state, c) -> soft(() -> live.shareGranted(c.share())))
        .onCommand(ShardsCounted.class, (state, c) -> soft(() -> live.shardsCounted(c)))
        .onCommand(
            SweepFinished.class,
            (state, c) -> soft(() -> live.sweepFinished(c.runId(), c.resumes())))
        .onCommand(ItemsCounted.class, ending::onItemsCounted)
        .onCommand(DispatchFailed.class, ending::onDispatchFailed)
        .onCommand(CountersFinal.class, ending::onCountersFinal)
        .onCommand(Filed.class, this::onFiled)
        .onCommand(LookedUp.class, control::onLookedUp)
        .onCommand(SignalsRead.class, this::onSignalsRead)
        .onCommand(BeginPruning.class, this::onBeginPruning)
        .onCommand(EndPruning.class, this::onEndPruning)
        .onCommand(
            GetPruning.class,
            (state, c) ->
                Effect().reply(c.replyTo(), new PruningClaims(Set.copyOf(state.pruning()))))
        .build();
  }

  /** Soft state changes only: nothing is journaled, nobody is answered. */
  private ReplyEffect<Event, State> soft(Runnable change) {
    change.run();
    return Effect().noReply();
  }

  /**
   * The runs are in {@code run_record}: forgotten here, unless one was resumed meanwhile or its
   * counters grew since they were written (it is written again with the next tick).
   */
  private ReplyEffect<Event, State> onFiled(State state, Filed filed) {
    List<String> done = filing.written(state, filed);
    if (done.isEmpty()) {
      return Effect().noReply();
    }
    return Effect().persist(new RunsFiled(done, clock.instant())).thenNoReply();
  }

  /** The deadline, by the coordinator's clock; then, once a second, the steering of every run. */
  private ReplyEffect<Event, State> onTick(State state, Tick tick) {
    Instant now = clock.instant();
    for (RunRecord run : state.runs().values()) {
      if (RunRules.pastDeadline(run, now)) {
        live.stop(
            run.runId(), new LiveRun.Stopping("deadline " + run.deadline() + " passed", false));
      }
    }
    if (ticks.steerNow()) {
      live.tick();
      filing.file(state);
      if (state.runs().isEmpty() && filing.idle() && live.isEmpty()) {
        ticks.sleep();
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
    RunRules.Counted counted = RunRules.count(read.signals(), state.signalOffset());
    if (counted.offset() == state.signalOffset()) {
      return Effect().reply(read.replyTo(), state.signalOffset());
    }
    Map<String, RunSignals> deltas = counted.deltas();
    return Effect()
        .persist(new SignalsCounted(counted.offset(), deltas, clock.instant()))
        .thenRun(
            s -> {
              deltas.forEach(live::signalsSeen);
              deltas.forEach(
                  (runId, delta) -> {
                    if (!s.runs().containsKey(runId)) {
                      filing.addSignals(runId, delta);
                    }
                  });
            })
        .thenReply(read.replyTo(), State::signalOffset);
  }

  // --- retention: which filed runs may be pruned -----------------------------------------------

  private ReplyEffect<Event, State> onBeginPruning(State state, BeginPruning cmd) {
    String runId = cmd.runId();
    var refusal = RunRules.pruneRefusal(state.runs().containsKey(runId), filing.isFiling(runId));
    if (refusal.isPresent()) {
      return Effect().reply(cmd.replyTo(), new PruningRefused(runId, refusal.get()));
    }
    if (state.pruning().contains(runId)) {
      return Effect().reply(cmd.replyTo(), new PruningAllowed(runId));
    }
    return Effect()
        .persist(new PruningBegun(runId, clock.instant()))
        .thenReply(cmd.replyTo(), s -> new PruningAllowed(runId));
  }

  private ReplyEffect<Event, State> onEndPruning(State state, EndPruning cmd) {
    if (!state.pruning().contains(cmd.runId())) {
      return Effect().reply(cmd.replyTo(), new PruningAllowed(cmd.runId()));
    }
    return Effect()
        .persist(new PruningEnded(cmd.runId(), clock.instant()))
        .thenReply(cmd.replyTo(), s -> new PruningAllowed(cmd.runId()));
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
        .onEvent(RunsFiled.class, State::onFiled)
        .onEvent(RunUnfiled.class, State::onUnfiled)
        .onEvent(PruningBegun.class, (state, e) -> state.withPruning(e.runId(), true))
        .onEvent(PruningEnded.class, (state, e) -> state.withPruning(e.runId(), false))
        .build();
  }
}

package io.fencekeeper.verify;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.run.RunView;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * The verifications of the cluster (docs/design.md, "Verifying a run"): a cluster singleton,
 * event-sourced for the verifications requested and how each ended, that runs every unfinished one
 * as a child {@link Verification} on its node. When it starts (first start, restart, or on another
 * node after its node died) it starts the unfinished ones again; each goes on after its last
 * journaled checkpoint. With {@code fencekeeper.verify.when-run-ends} it also requests one for
 * every run that ends after the setting was first seen.
 *
 * <p>Its events and state are nested here on purpose: their class names are the journal's manifests
 * (docs/design.md, "Code map").
 */
public final class VerificationKeeper
    extends EventSourcedBehaviorWithEnforcedReplies<
        VerificationKeeper.Command, VerificationKeeper.Event, VerificationKeeper.State> {

  public static final PersistenceId PERSISTENCE_ID = PersistenceId.ofUniqueId("VerificationKeeper");

  /** How often runs are looked at for ones that ended, with {@code when-run-ends}. */
  static final Duration AUTO_EVERY = Duration.ofSeconds(5);

  /** Starts (or connects to) the singleton; the returned ref is a proxy on every node. */
  public static ActorRef<Command> initSingleton(ActorSystem<?> system, VerifyDependencies deps) {
    return ClusterSingleton.get(system)
        .init(
            SingletonActor.of(
                Behaviors.supervise(create(deps))
                    .onFailure(
                        SupervisorStrategy.restartWithBackoff(
                            Duration.ofMillis(200), Duration.ofSeconds(10), 0.2)),
                "verification-keeper"));
  }

  public static Behavior<Command> create(VerifyDependencies deps) {
    return Behaviors.setup(
        ctx -> Behaviors.withTimers(timers -> new VerificationKeeper(ctx, timers, deps)));
  }

  // --- protocol ----------------------------------------------------------------------------------

  public sealed interface Command extends CborSerializable {}

  /** Starts a verification of {@code plan} (its number is given here). */
  public record Start(VerificationPlan plan, ActorRef<StartReply> replyTo) implements Command {}

  /** One verification of a run; {@code number} 0 is the latest. */
  public record Get(String runId, int number, ActorRef<Answer> replyTo) implements Command {}

  /** The verifications of a run, newest first; {@code runId} null: the latest of every run. */
  public record ListOf(String runId, ActorRef<Listing> replyTo) implements Command {}

  record Progress(VerificationView summary) implements Command {}

  record Finished(VerificationView summary) implements Command {}

  record ChildStopped(String id) implements Command {}

  record Respawn(String id) implements Command {}

  record AutoTick() implements Command {}

  record RunsRead(List<RunView> runs) implements Command {}

  public sealed interface StartReply extends CborSerializable {}

  public record Accepted(VerificationView view) implements StartReply {}

  /** The same rows of the run are being verified already: that verification. */
  public record AlreadyRunning(VerificationView view) implements StartReply {}

  public record Refused(String error, String message) implements StartReply {}

  /** {@code view} null: no such verification. */
  public record Answer(VerificationView view) implements CborSerializable {}

  public record Listing(List<VerificationView> verifications) implements CborSerializable {}

  public sealed interface Event extends CborSerializable {}

  public record Requested(VerificationPlan plan, Instant at) implements Event {}

  public record Concluded(VerificationView summary, Instant at) implements Event {}

  /** {@code when-run-ends} was first seen: runs that end from now on verify themselves. */
  public record AutoVerifyOn(Instant at) implements Event {}

  /** {@code ended} is null while the verification runs. */
  public record Entry(VerificationPlan plan, VerificationView ended) implements CborSerializable {}

  public record State(Map<String, Entry> verifications, Instant autoSince)
      implements CborSerializable {

    State onRequested(Requested e) {
      Map<String, Entry> next = new TreeMap<>(verifications);
      next.put(e.plan().id(), new Entry(e.plan(), null));
      return new State(next, autoSince);
    }

    State onConcluded(Concluded e) {
      String id = e.summary().runId() + "#" + e.summary().number();
      Entry entry = verifications.get(id);
      if (entry == null) {
        return this;
      }
      Map<String, Entry> next = new TreeMap<>(verifications);
      next.put(id, new Entry(entry.plan(), e.summary()));
      return new State(next, autoSince);
    }

    List<Entry> of(String runId) {
      return verifications.values().stream()
          .filter(entry -> entry.plan().runId().equals(runId))
          .sorted(Comparator.comparingInt((Entry entry) -> entry.plan().number()).reversed())
          .toList();
    }
  }

  // --- behaviour ---------------------------------------------------------------------------------

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final VerifyDependencies deps;
  private final Map<String, ActorRef<Verification.Command>> children = new HashMap<>();
  // what the running ones last reported (soft: rebuilt from their reports after a move)
  private final Map<String, VerificationView> progress = new HashMap<>();

  private VerificationKeeper(
      ActorContext<Command> ctx, TimerScheduler<Command> timers, VerifyDependencies deps) {
    super(PERSISTENCE_ID);
    this.ctx = ctx;
    this.timers = timers;
    this.deps = deps;
  }

  @Override
  public State emptyState() {
    return new State(new TreeMap<>(), null);
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(100, 2);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), this::onRecovered)
        .build();
  }

  /** The unfinished ones go on from their checkpoints, on this node. */
  private void onRecovered(State state) {
    state.verifications().values().stream()
        .filter(entry -> entry.ended() == null)
        .forEach(entry -> spawn(entry.plan()));
    if (deps.settings().whenRunEnds()) {
      // at once: the first time, runs that end from this moment on verify themselves
      ctx.getSelf().tell(new AutoTick());
      timers.startTimerWithFixedDelay(new AutoTick(), AUTO_EVERY);
    }
  }

  private ActorRef<Verification.Command> spawn(VerificationPlan plan) {
    ActorRef<Verification.Command> child =
        ctx.spawn(
            Verification.create(plan, deps, ctx.getSelf()),
            "verification-" + URLEncoder.encode(plan.id(), StandardCharsets.UTF_8));
    ctx.watchWith(child, new ChildStopped(plan.id()));
    children.put(plan.id(), child);
    return child;
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Start.class, this::onStart)
        .onCommand(Get.class, this::onGet)
        .onCommand(ListOf.class, this::onList)
        .onCommand(
            Progress.class,
            (state, p) -> {
              String id = p.summary().runId() + "#" + p.summary().number();
              Entry entry = state.verifications().get(id);
              if (entry != null && entry.ended() == null) {
                progress.put(id, p.summary());
              }
              return Effect().noReply();
            })
        .onCommand(Finished.class, this::onFinished)
        .onCommand(ChildStopped.class, this::onChildStopped)
        .onCommand(
            Respawn.class,
            (state, r) -> {
              Entry entry = state.verifications().get(r.id());
              if (entry != null && entry.ended() == null && !children.containsKey(r.id())) {
                spawn(entry.plan());
              }
              return Effect().noReply();
            })
        .onCommand(AutoTick.class, this::onAutoTick)
        .onCommand(RunsRead.class, this::onRunsRead)
        .build();
  }

  private ReplyEffect<Event, State> onStart(State state, Start start) {
    VerificationPlan plan = start.plan();
    Optional<Entry> running =
        state.of(plan.runId()).stream().filter(entry -> entry.ended() == null).findFirst();
    if (running.isPresent()) {
      VerificationPlan other = running.get().plan();
      if (other.sameRows(plan.sample(), plan.seed())) {
        return Effect().reply(start.replyTo(), new AlreadyRunning(summary(running.get())));
      }
      return Effect()
          .reply(
              start.replyTo(),
              new Refused(
                  "verification_running",
                  "verification "
                      + other.number()
                      + " of run "
                      + plan.runId()
                      + " is still RUNNING with other rows; wait for it to end"));
    }
    VerificationPlan numbered = plan.numbered(nextNumber(state, plan.runId()));
    return Effect()
        .persist(new Requested(numbered, deps.clock().instant()))
        .thenRun(s -> started(numbered))
        .thenReply(start.replyTo(), s -> new Accepted(VerificationView.initial(numbered)));
  }

  private void started(VerificationPlan plan) {
    ctx.getLog()
        .info(
            "verification {} of run {} requested: {} of {} items{}",
            plan.number(),
            plan.runId(),
            plan.sampling().toCheck(),
            plan.population(),
            plan.sample() > 0 ? " (sample, seed " + plan.seed() + ")" : "");
    spawn(plan);
  }

  private static int nextNumber(State state, String runId) {
    return state.of(runId).stream().mapToInt(e -> e.plan().number()).max().orElse(0) + 1;
  }

  private ReplyEffect<Event, State> onGet(State state, Get get) {
    List<Entry> ofRun = state.of(get.runId());
    Optional<Entry> entry =
        get.number() == 0
            ? ofRun.stream().findFirst()
            : ofRun.stream().filter(e -> e.plan().number() == get.number()).findFirst();
    if (entry.isEmpty()) {
      return Effect().reply(get.replyTo(), new Answer(null));
    }
    // the child has the findings: an ended one that stopped recovers to answer, then stops again
    VerificationPlan plan = entry.get().plan();
    ActorRef<Verification.Command> child = children.get(plan.id());
    if (child == null) {
      child = spawn(plan);
    }
    child.tell(new Verification.Get(get.replyTo()));
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onList(State state, ListOf list) {
    List<VerificationView> views = new ArrayList<>();
    if (list.runId() != null) {
      state.of(list.runId()).forEach(entry -> views.add(summary(entry)));
    } else {
      Map<String, Entry> latest = new TreeMap<>();
      state
          .verifications()
          .values()
          .forEach(
              entry ->
                  latest.merge(
                      entry.plan().runId(),
                      entry,
                      (a, b) -> a.plan().number() >= b.plan().number() ? a : b));
      latest.values().forEach(entry -> views.add(summary(entry)));
    }
    return Effect().reply(list.replyTo(), new Listing(views));
  }

  private VerificationView summary(Entry entry) {
    if (entry.ended() != null) {
      return entry.ended();
    }
    return progress.getOrDefault(entry.plan().id(), VerificationView.initial(entry.plan()));
  }

  private ReplyEffect<Event, State> onFinished(State state, Finished finished) {
    VerificationView summary = finished.summary();
    String id = summary.runId() + "#" + summary.number();
    Entry entry = state.verifications().get(id);
    if (entry == null || entry.ended() != null) {
      return Effect().noReply();
    }
    return Effect()
        .persist(new Concluded(summary, deps.clock().instant()))
        .thenRun(s -> progress.remove(id))
        .thenNoReply();
  }

  /** A child that stopped before it ended (a failure) starts again from its checkpoint. */
  private ReplyEffect<Event, State> onChildStopped(State state, ChildStopped stopped) {
    children.remove(stopped.id());
    Entry entry = state.verifications().get(stopped.id());
    if (entry != null && entry.ended() == null) {
      ctx.getLog().warn("verification {} stopped before it ended; starting it again", stopped.id());
      timers.startSingleTimer("respawn-" + stopped.id(), new Respawn(stopped.id()), RESPAWN);
    }
    return Effect().noReply();
  }

  static final Duration RESPAWN = Duration.ofSeconds(2);

  // --- a run verifies itself when it ends (fencekeeper.verify.when-run-ends) ---------------------

  private ReplyEffect<Event, State> onAutoTick(State state, AutoTick tick) {
    if (state.autoSince() == null) {
      return Effect().persist(new AutoVerifyOn(deps.clock().instant())).thenNoReply();
    }
    ctx.pipeToSelf(
        deps.runs().get(), (runs, failure) -> new RunsRead(failure == null ? runs : List.of()));
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onRunsRead(State state, RunsRead read) {
    List<Event> requested = new ArrayList<>();
    Map<String, Integer> numbers = new HashMap<>();
    for (RunView run : read.runs()) {
      boolean endedSince =
          run.state().ended()
              && run.endedAt() != null
              && !run.endedAt().isBefore(state.autoSince())
              && run.scopeId() != null;
      if (!endedSince || !state.of(run.runId()).isEmpty() || numbers.containsKey(run.runId())) {
        continue;
      }
      numbers.put(run.runId(), 1);
      VerificationPlan plan =
          VerificationPlan.of(
                  run,
                  deps.settings().whenRunEndsSample(),
                  Verifications.newSeed(),
                  true,
                  deps.clock().instant())
              .numbered(1);
      requested.add(new Requested(plan, deps.clock().instant()));
    }
    if (requested.isEmpty()) {
      return Effect().noReply();
    }
    return Effect()
        .persist(requested)
        .thenRun(s -> requested.forEach(e -> started(((Requested) e).plan())))
        .thenNoReply();
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(Requested.class, State::onRequested)
        .onEvent(Concluded.class, State::onConcluded)
        .onEvent(AutoVerifyOn.class, (state, e) -> new State(state.verifications(), e.at()))
        .build();
  }
}

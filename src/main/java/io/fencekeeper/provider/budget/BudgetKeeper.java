package io.fencekeeper.provider.budget;

import io.fencekeeper.CborSerializable;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
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
 * The budget keeper (docs/design.md, "Provider budgets"): a cluster singleton that leases blocks of
 * each provider's permits to the worker pools of every node, tells each run its share, and cuts the
 * budget when the share of every caller's calls that were throttled says the provider limits them
 * ({@link ThrottleShare}). Event-sourced for what an operator sets ({@code PUT
 * /api/providers/{name}}): that survives a restart and a move. The leases themselves are not
 * journaled: a keeper that starts learns them from the nodes' renewals (see {@link BudgetBook}).
 */
public final class BudgetKeeper
    extends EventSourcedBehaviorWithEnforcedReplies<
        BudgetKeeper.Command, BudgetKeeper.Event, BudgetKeeper.State> {

  public static final PersistenceId PERSISTENCE_ID = PersistenceId.ofUniqueId("ProviderBudgets");

  /** How often leases are checked and the budget may grow by one. */
  static final Duration TICK = Duration.ofMillis(250);

  /**
   * While no provider has a budget there is nothing to take back in time: the keeper looks every
   * few seconds only (an idle node must not wake up four times a second for nothing).
   */
  static final Duration IDLE_TICK = Duration.ofSeconds(5);

  private static final String TICK_KEY = "tick";

  /**
   * The keeper's configuration, from the node it runs on: the budget of every configured provider
   * ({@code fencekeeper.provider} is {@code default}), how long a node may use its permits without
   * renewing, and the pause between two halvings.
   */
  public record Settings(
      Map<String, ProviderBudget> configured, Duration permitLease, Duration decreaseCooldown) {

    public Settings {
      configured = Map.copyOf(configured);
    }
  }

  /** Starts (or connects to) the singleton; the returned ref is a proxy on every node. */
  public static ActorRef<Command> initSingleton(ActorSystem<?> system, Settings settings) {
    return ClusterSingleton.get(system)
        .init(
            SingletonActor.of(
                Behaviors.supervise(create(settings))
                    .onFailure(
                        SupervisorStrategy.restartWithBackoff(
                            Duration.ofMillis(200), Duration.ofSeconds(10), 0.2)),
                "provider-budget-keeper"));
  }

  public static Behavior<Command> create(Settings settings) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  timers.startSingleTimer(TICK_KEY, new Tick(), TICK);
                  Cluster cluster = Cluster.get(ctx.getSystem());
                  return new BudgetKeeper(
                      ctx,
                      timers,
                      settings,
                      Clock.systemUTC(),
                      System::nanoTime,
                      () -> upMembers(cluster));
                }));
  }

  private static Set<String> upMembers(Cluster cluster) {
    Set<String> up = new HashSet<>();
    cluster
        .state()
        .getMembers()
        .forEach(
            member -> {
              if (member.status() == MemberStatus.up()) {
                up.add(member.address().toString());
              }
            });
    return up;
  }

  // --- protocol ----------------------------------------------------------------------------------

  public sealed interface Command extends CborSerializable {}

  /**
   * A node's pool renews its lease on a provider's permits and says what it holds and wants ({@link
   * PermitPool#report()}); the answer, and every later change of its grant, goes to {@code
   * replyTo}. {@code seq} orders the node's renewals; the answer echoes it. {@code holding} covers
   * every grant up to {@code ackVersion} of keeper incarnation {@code ackEpoch}: a grant the node
   * had not seen yet is still counted at its own size. {@code calls}: its calls of the provider
   * that ended since its last renewal, {@code throttled} of them answered 429 (the keeper reads
   * their share, {@link ThrottleShare}).
   */
  public record Renew(
      String provider,
      String node,
      long seq,
      long ackEpoch,
      long ackVersion,
      int holding,
      int rateHolding,
      int inFlight,
      int demand,
      long calls,
      int throttled,
      long retryAfterMillis,
      ActorRef<Grant> replyTo)
      implements Command {}

  /**
   * What a node may use: {@code permits} calls at once and {@code rate} calls a second (-1: no rate
   * limit), for {@code lease} from when it sent the renewal numbered {@code replyTo}. A pushed
   * change ({@code replyTo} -1) never extends the lease. {@code limited} false: the provider has no
   * budget, nothing to count. {@code epoch} and {@code version} name the grant for the node's
   * acknowledgement.
   */
  public record Grant(
      String provider,
      boolean limited,
      int permits,
      int rate,
      Duration lease,
      long replyTo,
      long epoch,
      long version)
      implements CborSerializable {}

  /** A run's dispatcher reports its demand (every second) and learns its {@link Share}. */
  public record ReportRun(
      String provider, String runId, int demand, boolean burst, ActorRef<Share> replyTo)
      implements Command {}

  /** The run's items in flight may be at most {@code share}; {@code limited} false: no budget. */
  public record Share(String provider, String runId, boolean limited, int share, int effective)
      implements CborSerializable {}

  /** The run ended: its share goes to the others at once. */
  public record LeaveRun(String provider, String runId) implements Command {}

  public record GetBudgets(ActorRef<Budgets> replyTo) implements Command {}

  public record Budgets(List<BudgetView> providers) implements CborSerializable {}

  /** An operator's new budget: journaled, then in force at once. */
  public record SetBudget(String provider, ProviderBudget budget, ActorRef<SetReply> replyTo)
      implements Command {}

  public sealed interface SetReply extends CborSerializable {}

  public record BudgetSet(BudgetView provider) implements SetReply {}

  public record UnknownProvider(String provider, List<String> known) implements SetReply {}

  record Tick() implements Command {}

  // --- events and state --------------------------------------------------------------------------

  public sealed interface Event extends CborSerializable {}

  public record BudgetChanged(String provider, ProviderBudget budget, Instant at)
      implements Event {}

  /** The budgets operators set, by provider; the configuration holds the others. */
  public record State(Map<String, ProviderBudget> set) implements CborSerializable {

    State onChanged(BudgetChanged e) {
      Map<String, ProviderBudget> next = new TreeMap<>(set);
      next.put(e.provider(), e.budget());
      return new State(next);
    }
  }

  // --- behaviour ---------------------------------------------------------------------------------

  private final ActorContext<Command> ctx;
  private final Settings settings;
  private final Clock clock;
  private final LongSupplier nanos;
  private final Supplier<Set<String>> upMembers;
  private final Map<String, BudgetBook> books = new TreeMap<>();
  private final TimerScheduler<Command> timers;
  private final Map<String, ActorRef<Grant>> holderRefs = new HashMap<>();

  /** This incarnation: the grants it sends are acknowledged by it. */
  private final long epoch = ThreadLocalRandom.current().nextLong();

  BudgetKeeper(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      Settings settings,
      Clock clock,
      LongSupplier nanos,
      Supplier<Set<String>> upMembers) {
    super(PERSISTENCE_ID);
    this.ctx = ctx;
    this.timers = timers;
    this.settings = settings;
    this.clock = clock;
    this.nanos = nanos;
    this.upMembers = upMembers;
  }

  @Override
  public State emptyState() {
    return new State(new TreeMap<>());
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

  /** One book per provider: the operator's budget if one was set, else the configured one. */
  private void onRecovered(State state) {
    Set<String> names = new HashSet<>(settings.configured().keySet());
    names.addAll(state.set().keySet());
    for (String name : names) {
      ProviderBudget set = state.set().get(name);
      books.put(
          name,
          new BudgetBook(
              name,
              epoch,
              set != null ? set : settings.configured().get(name),
              set != null ? "operator" : "config",
              settings.permitLease(),
              settings.decreaseCooldown(),
              nanos.getAsLong(),
              clock.instant()));
    }
  }

  /** A provider nobody configured on this node (a node with another configuration): no budget. */
  private BudgetBook book(String provider) {
    return books.computeIfAbsent(
        provider,
        name ->
            new BudgetBook(
                name,
                epoch,
                ProviderBudget.NONE,
                "config",
                settings.permitLease(),
                settings.decreaseCooldown(),
                nanos.getAsLong(),
                clock.instant()));
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Renew.class, this::onRenew)
        .onCommand(ReportRun.class, this::onReportRun)
        .onCommand(
            LeaveRun.class,
            (state, leave) -> {
              book(leave.provider()).leaveRun(leave.runId());
              return Effect().noReply();
            })
        .onCommand(GetBudgets.class, this::onGet)
        .onCommand(SetBudget.class, this::onSet)
        .onCommand(Tick.class, this::onTick)
        .build();
  }

  private ReplyEffect<Event, State> onRenew(State state, Renew renew) {
    String holderId = holderId(renew.replyTo());
    holderRefs.put(holderId, renew.replyTo());
    BudgetBook.Report report =
        new BudgetBook.Report(
            renew.node(),
            renew.seq(),
            renew.ackEpoch(),
            renew.ackVersion(),
            renew.holding(),
            renew.rateHolding(),
            renew.inFlight(),
            renew.demand(),
            renew.calls(),
            renew.throttled(),
            renew.retryAfterMillis());
    send(book(renew.provider()).renew(holderId, report, nanos.getAsLong(), clock.instant()));
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onReportRun(State state, ReportRun report) {
    return Effect()
        .reply(
            report.replyTo(),
            book(report.provider())
                .reportRun(report.runId(), report.demand(), report.burst(), nanos.getAsLong()));
  }

  private ReplyEffect<Event, State> onGet(State state, GetBudgets get) {
    long now = nanos.getAsLong();
    return Effect()
        .reply(
            get.replyTo(),
            new Budgets(books.values().stream().map(book -> book.view(now)).toList()));
  }

  private ReplyEffect<Event, State> onSet(State state, SetBudget set) {
    if (!books.containsKey(set.provider())) {
      return Effect()
          .reply(set.replyTo(), new UnknownProvider(set.provider(), List.copyOf(books.keySet())));
    }
    return Effect()
        .persist(new BudgetChanged(set.provider(), set.budget(), clock.instant()))
        .thenRun(
            s -> {
              send(
                  books
                      .get(set.provider())
                      .set(set.budget(), "operator", nanos.getAsLong(), clock.instant()));
              scheduleTick(); // a budget now: its leases are watched every 250 ms from now on
            })
        .thenReply(
            set.replyTo(), s -> new BudgetSet(books.get(set.provider()).view(nanos.getAsLong())));
  }

  private ReplyEffect<Event, State> onTick(State state, Tick tick) {
    long now = nanos.getAsLong();
    Instant at = clock.instant();
    Set<String> members = upMembers.get();
    books.values().forEach(book -> send(book.tick(now, at, members)));
    Set<String> holding = new HashSet<>();
    books.values().forEach(book -> holding.addAll(book.holderIds()));
    holderRefs.keySet().retainAll(holding);
    scheduleTick();
    return Effect().noReply();
  }

  /** Every 250 ms while a provider has a budget, else every few seconds. */
  private void scheduleTick() {
    boolean limited = books.values().stream().anyMatch(book -> book.budget().limited());
    timers.startSingleTimer(TICK_KEY, new Tick(), limited ? TICK : IDLE_TICK);
  }

  private void send(List<BudgetBook.Outgoing> outgoing) {
    for (BudgetBook.Outgoing out : outgoing) {
      ActorRef<Grant> to = holderRefs.get(out.holderId());
      if (to != null) {
        to.tell(out.grant());
      }
    }
  }

  /** A pool's incarnation: a node that restarts at the same address is a new holder. */
  private static String holderId(ActorRef<?> ref) {
    return ref.path().toSerializationFormat();
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(BudgetChanged.class, State::onChanged)
        .build();
  }
}

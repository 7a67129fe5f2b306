package io.fencekeeper.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueFactory;
import io.fencekeeper.DaemonThreads;
import io.fencekeeper.archive.RetentionSettings;
import io.fencekeeper.dispatch.DispatchAgent;
import io.fencekeeper.dispatch.NodeDispatcher;
import io.fencekeeper.item.ExternalWorkers;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemSettings;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.item.ReachabilityWatch;
import io.fencekeeper.item.ShardedItems;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.provider.budget.PermitPool;
import io.fencekeeper.provider.budget.ProviderBudgets;
import io.fencekeeper.provider.factory.ProviderCatalog;
import io.fencekeeper.provider.factory.ProviderFactory;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.run.EndedRuns;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunService;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.schedule.NightlySchedule;
import io.fencekeeper.run.schedule.ScheduleKeeper;
import io.fencekeeper.run.scope.ScopeReader;
import io.fencekeeper.run.scope.ScopeSettings;
import io.fencekeeper.verify.Verifications;
import io.fencekeeper.verify.VerifySettings;
import io.fencekeeper.worker.ItemAttempt;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.SelfUp;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Fencekeeper node: the schema migrated, the ActorSystem up as a cluster member, the WorkItem
 * entity registered with sharding, the run coordinator singleton reachable, and this node's worker
 * pool pulling work. The same class runs the embedded single node and one node of many.
 */
public final class FencekeeperNode implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(FencekeeperNode.class);
  public static final String SYSTEM_NAME = "fencekeeper";

  private final ActorSystem<Void> system;
  private final NodeSettings settings;
  private final JournalDatabase database;
  private final Clock clock;
  private final ItemGateway items;
  private final RunService runs;
  private final ActorRef<RunCoordinator.Command> coordinator;
  private final RunItemStore runItems;
  private final ScheduleKeeper schedules;
  private final Map<String, ProviderFactory.Started> providers;
  private final ProviderBudgets budgets;
  private final Verifications verifications;
  private final EndedRuns ended;
  private final RetentionSettings retention;
  private final ExternalWorkers externalWorkers;

  private FencekeeperNode(
      ActorSystem<Void> system,
      NodeSettings settings,
      JournalDatabase database,
      Clock clock,
      ItemGateway items,
      RunService runs,
      ActorRef<RunCoordinator.Command> coordinator,
      RunItemStore runItems,
      ScheduleKeeper schedules,
      Map<String, ProviderFactory.Started> providers,
      ProviderBudgets budgets,
      Verifications verifications,
      EndedRuns ended,
      RetentionSettings retention,
      ExternalWorkers externalWorkers) {
    this.system = system;
    this.settings = settings;
    this.database = database;
    this.clock = clock;
    this.items = items;
    this.runs = runs;
    this.coordinator = coordinator;
    this.runItems = runItems;
    this.schedules = schedules;
    this.providers = providers;
    this.budgets = budgets;
    this.verifications = verifications;
    this.ended = ended;
    this.retention = retention;
    this.externalWorkers = externalWorkers;
  }

  /** How to start a node; tests replace the clock, the provider or the item gateway. */
  public static final class Builder {
    private final Config config;
    private Clock clock = Clock.systemUTC();
    private Provider provider;
    private UnaryOperator<ItemGateway> workerGateway = UnaryOperator.identity();
    private Integer workers;
    private GovernorSettings governor;
    private ItemAttempt.AttemptListener attemptListener = ItemAttempt.AttemptListener.NONE;

    private Builder(Config config) {
      this.config = config;
    }

    /** The entities' only authority on time (lease expiry) and the deadline clock. */
    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    /** The default provider, instead of the one {@code fencekeeper.provider} describes. */
    public Builder provider(Provider provider) {
      this.provider = provider;
      return this;
    }

    /** Wraps the gateway the workers use, e.g. to inject a failed status write. */
    public Builder workerGateway(UnaryOperator<ItemGateway> decorator) {
      this.workerGateway = decorator;
      return this;
    }

    /** Observes every provider call and reconciliation (metrics). */
    public Builder attemptListener(ItemAttempt.AttemptListener listener) {
      this.attemptListener = listener;
      return this;
    }

    /** Governor limits instead of {@code fencekeeper.governor}. */
    public Builder governor(GovernorSettings governor) {
      this.governor = governor;
      return this;
    }

    public Builder workers(int workers) {
      this.workers = workers;
      return this;
    }

    public FencekeeperNode start() {
      return FencekeeperNode.start(this);
    }
  }

  public static Builder builder(Config config) {
    return new Builder(config);
  }

  public static FencekeeperNode start(Config config, Clock clock) {
    return builder(config).clock(clock).start();
  }

  public static FencekeeperNode start(Config config) {
    return builder(config).start();
  }

  /** The composition root: each step builds on the ones above it. */
  private static FencekeeperNode start(Builder b) {
    NodeSettings settings = NodeSettings.from(b.config);
    RemotingExposure.check(b.config);
    PartitionTimings.check(b.config);
    // a retention that cannot work is refused before anything starts, not a year later
    RetentionSettings retention = RetentionSettings.from(b.config).checkArchiveDir();
    JournalDatabase database = migratedJournal(settings);
    ActorSystem<Void> system =
        startActorSystem(
            b.config, settings, database, b.workers != null ? b.workers : settings.workers());
    try {
      return startOn(system, b, settings, retention, database);
    } catch (RuntimeException e) {
      // a node that cannot start (a provider plugin that refused to load) leaves nothing running
      system.terminate();
      throw e;
    }
  }

  private static FencekeeperNode startOn(
      ActorSystem<Void> system,
      Builder b,
      NodeSettings settings,
      RetentionSettings retention,
      JournalDatabase database) {
    ItemShards shards =
        new ItemShards(
            system.settings().config().getInt("pekko.cluster.sharding.number-of-shards"));
    // the lease API workers' last words, kept cluster-wide: how an item tells a lost one from one
    // that is alive (docs/design.md, "Lost holders count")
    ExternalWorkers externalWorkers = ExternalWorkers.start(system, b.clock);
    WorkItem.init(
        system,
        b.clock,
        new ItemSettings(settings.maxLease(), settings.quarantineAfterLosses()),
        shards,
        externalWorkers);
    system.systemActorOf(ReachabilityWatch.create(shards), "reachability-watch", Props.empty());
    ExecutorService blocking = blockingExecutor();
    RunItemStore runItems = new RunItemStore(database);
    EndedRuns ended =
        EndedRuns.on(
            runItems,
            JacksonObjectMapperProvider.get(Adapter.toClassic(system))
                .getOrCreate("jackson-json", Optional.empty()));
    ItemGateway items = new ShardedItems(system, itemAskTimeout(settings.lease()), CLAIM_TIMEOUT);
    // the worker pool's own gateway: only its claims name this node, so a lease API caller cannot
    // borrow the node's standing with a look-alike worker id
    ItemGateway ownWorkerItems =
        ShardedItems.forOwnWorkers(system, itemAskTimeout(settings.lease()), CLAIM_TIMEOUT);
    int workers = b.workers != null ? b.workers : settings.workers();
    ProviderCatalog catalog = ProviderCatalog.fromConfig(b.config);
    ActorRef<BudgetKeeper.Command> keeper =
        BudgetKeeper.initSingleton(
            system,
            new BudgetKeeper.Settings(
                catalog.budgets(), catalog.permitLease(), catalog.decreaseCooldown()));
    ActorRef<RunCoordinator.Command> coordinator =
        RunCoordinator.initSingleton(
            system,
            new RunCoordinator.Dependencies(
                b.clock,
                runItems,
                ended,
                items,
                shards,
                blocking,
                b.governor != null ? b.governor : settings.governor(),
                settings.fleet().withWorkersPerNode(workers),
                Optional.of(keeper)));
    if (settings.hostsItems(workers)) {
      // this node dispatches the items whose shards it hosts (docs/design.md)
      system.systemActorOf(
          DispatchAgent.create(
              new NodeDispatcher.Dependencies(
                  b.clock,
                  runItems,
                  b.workerGateway.apply(items),
                  shards,
                  blocking,
                  settings.lease(),
                  OFFER_GRACE,
                  workers)),
          "dispatch-agent",
          Props.empty());
    }
    RunService runs =
        new RunService(
            system,
            coordinator,
            runItems,
            ended,
            new ScopeReader(ScopeSettings.fromConfig(b.config)),
            items,
            blocking,
            Duration.ofSeconds(30),
            b.clock,
            settings.maxRunLength(),
            catalog.entries().keySet(),
            shards,
            settings.maxLease());
    Map<String, PermitPool> pools = NodeWorkerPool.permitPools(system, catalog, keeper);
    Map<String, ProviderFactory.Started> providers =
        NodeWorkerPool.start(
            system,
            workers,
            b.workerGateway.apply(ownWorkerItems),
            catalog,
            pools,
            b.provider,
            b.clock,
            b.attemptListener);
    Map<String, Provider> lookups = new TreeMap<>();
    providers.forEach((name, started) -> lookups.put(name, started.provider()));
    if (b.provider != null) {
      lookups.putIfAbsent(ProviderName.DEFAULT, b.provider);
    }
    Verifications verifications =
        Verifications.start(
            system,
            VerifySettings.fromConfig(b.config),
            items,
            runItems,
            blocking,
            runs,
            catalog,
            lookups,
            pools,
            b.clock,
            b.attemptListener);
    ScheduleKeeper schedules = reviewSchedules(b, system, runs);
    // a staging whose stager is gone goes on from its last step on the first node that looks
    system
        .scheduler()
        .scheduleWithFixedDelay(
            RunService.STAGING_WATCH,
            RunService.STAGING_WATCH,
            runs::resumeInterruptedStagings,
            system.executionContext());
    joinCluster(system, settings);
    Map<String, ProviderFactory.Started> owned = new TreeMap<>(providers);
    if (b.provider != null) {
      owned.remove(ProviderName.DEFAULT); // the caller's provider stays the caller's to close
    }
    closeOnShutdown(system, owned, runItems, blocking);
    return new FencekeeperNode(
        system,
        settings,
        database,
        b.clock,
        items,
        runs,
        coordinator,
        runItems,
        schedules,
        providers,
        new ProviderBudgets(system, keeper, pools, Duration.ofSeconds(10)),
        verifications,
        ended,
        retention,
        externalWorkers);
  }

  /** How long an offer outlives its lease before the dispatcher hands the item out again. */
  private static final Duration OFFER_GRACE = Duration.ofSeconds(5);

  /**
   * How long a worker waits for a claim's answer: a healthy item answers in milliseconds, and a
   * worker waiting on an item whose node died would hold a slot items on healthy nodes need.
   */
  static final Duration CLAIM_TIMEOUT = Duration.ofSeconds(2);

  private static JournalDatabase migratedJournal(NodeSettings settings) {
    JournalDatabase database = settings.journalDatabase();
    int migrations = database.migrate();
    log.info("journal database {} ready ({} migrations applied)", database.kind(), migrations);
    return database;
  }

  private static ActorSystem<Void> startActorSystem(
      Config config, NodeSettings settings, JournalDatabase database, int workers) {
    Config pekkoConfig = database.pekkoConfig();
    // the members that host item shards carry the role the item entity is sharded on
    List<String> roles = new ArrayList<>(config.getStringList("pekko.cluster.roles"));
    if (settings.hostsItems(workers) && !roles.contains(WorkItem.HOST_ROLE)) {
      roles.add(WorkItem.HOST_ROLE);
    }
    pekkoConfig =
        pekkoConfig.withValue("pekko.cluster.roles", ConfigValueFactory.fromIterable(roles));
    if (!settings.seedNodes().isEmpty()) {
      pekkoConfig =
          pekkoConfig.withValue(
              "pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(settings.seedNodes()));
    }
    return ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, pekkoConfig.withFallback(config));
  }

  /** Scope reading and run_item writes block: they run here, never on an actor's thread. */
  private static ExecutorService blockingExecutor() {
    return Executors.newFixedThreadPool(4, DaemonThreads.named("fencekeeper-blocking"));
  }

  /**
   * A third of the lease (2-15 s): a worker waiting on an item whose shard died must give up while
   * there is still lease to take over, not after (measured: 15 s made takeover ~22 s).
   */
  static Duration itemAskTimeout(Duration lease) {
    Duration third = lease.dividedBy(3);
    if (third.compareTo(Duration.ofSeconds(2)) < 0) {
      return Duration.ofSeconds(2);
    }
    return third.compareTo(Duration.ofSeconds(15)) > 0 ? Duration.ofSeconds(15) : third;
  }

  /** Nightly schedules: at start-up (catch-up of a firing missed while down) and every 30 s. */
  private static ScheduleKeeper reviewSchedules(
      Builder b, ActorSystem<Void> system, RunService runs) {
    ScheduleKeeper schedules =
        new ScheduleKeeper(NightlySchedule.fromConfig(b.config), runs, b.clock);
    system
        .scheduler()
        .scheduleWithFixedDelay(
            Duration.ofSeconds(5),
            Duration.ofSeconds(30),
            () ->
                schedules
                    .review()
                    .whenComplete(
                        (review, failure) -> {
                          if (failure != null) {
                            log.warn("reviewing schedules failed: {}", failure.toString());
                          }
                        }),
            system.executionContext());
    return schedules;
  }

  private static void joinCluster(ActorSystem<Void> system, NodeSettings settings) {
    // with Cluster Bootstrap the node joins once discovery and its contact points say where
    if (settings.seedNodes().isEmpty() && !settings.clusterBootstrap()) {
      // no seeds: this node is a cluster of one
      Cluster cluster = Cluster.get(system);
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
    }
  }

  /** After the journal flushed its last write (coordinated shutdown), the pools close. */
  private static void closeOnShutdown(
      ActorSystem<Void> system,
      Map<String, ProviderFactory.Started> ownedProviders,
      RunItemStore runItems,
      ExecutorService blocking) {
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
            "close-fencekeeper-resources",
            () ->
                CompletableFuture.supplyAsync(
                    () -> {
                      ownedProviders.values().forEach(p -> p.provider().close());
                      awaitBlockingTasks(blocking);
                      runItems.close();
                      return org.apache.pekko.Done.getInstance();
                    }));
  }

  /**
   * A task on the blocking executor may hold a pooled connection, and the pool closes a connection
   * in use only when it comes back, at some later moment: the tasks get most of the phase's 5 s to
   * finish, then are interrupted, so that the run tables' pool is closed, and on the embedded H2
   * file the database with it, before close() returns. (This was meant to end WorkItemOnH2Test's
   * "File corrupted while reading record" when a node starts again on the same file in the same
   * JVM; that failure came back with it in place, and looks like H2's own "Double mark" on reopen.)
   */
  private static void awaitBlockingTasks(ExecutorService blocking) {
    blocking.shutdown();
    try {
      if (!blocking.awaitTermination(4, TimeUnit.SECONDS)) {
        log.warn("blocking tasks still running 4 s into shutdown: interrupting them");
        blocking.shutdownNow();
      }
    } catch (InterruptedException e) {
      blocking.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /** Blocks until this member is Up, so callers know sharding can place entities here. */
  public FencekeeperNode awaitUp(Duration timeout) throws TimeoutException {
    CompletableFuture<Void> up = new CompletableFuture<>();
    Cluster cluster = Cluster.get(system);
    if (cluster.selfMember().status() == MemberStatus.up()) {
      return this;
    }
    system.systemActorOf(
        Behaviors.<SelfUp>setup(
            ctx -> {
              cluster.subscriptions().tell(Subscribe.create(ctx.getSelf(), SelfUp.class));
              return Behaviors.receiveMessage(
                  msg -> {
                    up.complete(null);
                    return Behaviors.stopped();
                  });
            }),
        "await-self-up-" + System.nanoTime(),
        Props.empty());
    try {
      up.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TimeoutException("interrupted while waiting for the node to join");
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
    return this;
  }

  public EntityRef<WorkItem.Command> item(ItemId itemId) {
    return ClusterSharding.get(system).entityRefFor(WorkItem.ENTITY_TYPE_KEY, itemId.value());
  }

  /** The lease API workers' last words (the API notes them, the items read them). */
  public ExternalWorkers externalWorkers() {
    return externalWorkers;
  }

  public ItemGateway items() {
    return items;
  }

  public ScheduleKeeper schedules() {
    return schedules;
  }

  /** The run_item table: every run's staged scope. */
  public RunItemStore runItems() {
    return runItems;
  }

  /** The run coordinator singleton (a proxy to wherever it lives in the cluster). */
  public ActorRef<RunCoordinator.Command> coordinator() {
    return coordinator;
  }

  public RunService runs() {
    return runs;
  }

  public ActorSystem<Void> system() {
    return system;
  }

  public NodeSettings settings() {
    return settings;
  }

  public JournalDatabase database() {
    return database;
  }

  public Clock clock() {
    return clock;
  }

  /** The default provider of this node's workers; empty on a node that only coordinates. */
  public Optional<Provider> provider() {
    return provider(ProviderName.DEFAULT);
  }

  /** The provider of this name of this node's workers; empty on a node that only coordinates. */
  public Optional<Provider> provider(String name) {
    return Optional.ofNullable(providers.get(name)).map(ProviderFactory.Started::provider);
  }

  /** The embedded simulated provider's server, when this node's default provider is {@code sim}. */
  public Optional<SimProviderServer> simProvider() {
    return Optional.ofNullable(providers.get(ProviderName.DEFAULT))
        .flatMap(ProviderFactory.Started::sim);
  }

  /** The ended runs filed in {@code run_record}: their records, tombstones and archives. */
  public EndedRuns endedRuns() {
    return ended;
  }

  /** {@code fencekeeper.retention}, checked at start (its archive directory is writable). */
  public RetentionSettings retention() {
    return retention;
  }

  /** The providers' budgets: the keeper's view, an operator's change, this node's permits. */
  public ProviderBudgets budgets() {
    return budgets;
  }

  /** Verifying ended runs against the provider (docs/design.md, "Verifying a run"). */
  public Verifications verifications() {
    return verifications;
  }

  /** Coordinated shutdown: leaves the cluster, hands shards over, flushes the journal. */
  @Override
  public void close() {
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.warn("node did not terminate within 60s", e);
    }
  }

  /** Configuration of a node from the bundled defaults plus overrides, for embedding. */
  public static Config config(Map<String, ?> overrides) {
    return NodeConfig.load(Optional.empty(), overrides);
  }
}

package io.fencekeeper.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueFactory;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.SelfUp;
import org.apache.pekko.cluster.typed.Subscribe;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Fencekeeper node: the schema migrated, the ActorSystem up as a cluster member, and the
 * WorkItem entity registered with sharding. The same class runs the embedded single node and one
 * node of many.
 */
public final class FencekeeperNode implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(FencekeeperNode.class);
  public static final String SYSTEM_NAME = "fencekeeper";

  private final ActorSystem<Void> system;
  private final NodeSettings settings;
  private final JournalDatabase database;
  private final Clock clock;

  private FencekeeperNode(
      ActorSystem<Void> system, NodeSettings settings, JournalDatabase database, Clock clock) {
    this.system = system;
    this.settings = settings;
    this.database = database;
    this.clock = clock;
  }

  /**
   * Starts a node from resolved configuration. {@code clock} is the entities' only authority on
   * time (lease expiry); tests inject a movable one.
   */
  public static FencekeeperNode start(Config config, Clock clock) {
    NodeSettings settings = NodeSettings.from(config);
    JournalDatabase database = JournalDatabase.from(settings);
    int migrations = database.migrate();
    log.info("journal database {} ready ({} migrations applied)", database.kind(), migrations);

    Config pekkoConfig = database.pekkoConfig();
    if (!settings.seedNodes().isEmpty()) {
      pekkoConfig =
          pekkoConfig.withValue(
              "pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(settings.seedNodes()));
    }
    ActorSystem<Void> system =
        ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, pekkoConfig.withFallback(config));
    WorkItem.init(system, clock, new WorkItem.Settings(settings.maxLease(), 5));

    Cluster cluster = Cluster.get(system);
    if (settings.seedNodes().isEmpty()) {
      // no seeds: this node is a cluster of one
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
    }
    return new FencekeeperNode(system, settings, database, clock);
  }

  public static FencekeeperNode start(Config config) {
    return start(config, Clock.systemUTC());
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
        org.apache.pekko.actor.typed.Props.empty());
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
  public static Config config(java.util.Map<String, ?> overrides) {
    return NodeConfig.load(java.util.Optional.empty(), overrides);
  }
}

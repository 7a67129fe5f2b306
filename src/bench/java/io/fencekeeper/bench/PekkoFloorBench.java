package io.fencekeeper.bench;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.SnapshotSelectionCriteria;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;
import org.apache.pekko.persistence.typed.javadsl.Recovery;

/**
 * The floor under any design with one event-sourced entity per item: the same node, journal and
 * database, but a bare entity that only does what the Pekko machinery must do for an item — start
 * and recover (one highest-sequence-number query), persist a claim, persist effect and completion
 * together, stop. No fencing checks, workers, dispatcher, provider or run. Driven with the same
 * concurrency as the Fencekeeper bench. Fencekeeper cannot be faster than this on the same machine;
 * how close it comes is how much of its own overhead is left.
 */
final class PekkoFloorBench {

  record Result(
      String database,
      int items,
      int concurrency,
      double seconds,
      double itemsPerSecond,
      ResourceMeter.Measured resources) {}

  private PekkoFloorBench() {}

  static final EntityTypeKey<Command> KEY = EntityTypeKey.create(Command.class, "FloorItem");

  sealed interface Command extends CborSerializable {}

  record Claim(ActorRef<Long> replyTo) implements Command {}

  record Complete(ActorRef<Long> replyTo) implements Command {}

  sealed interface Event extends CborSerializable {}

  record Claimed(long token) implements Event {}

  record EffectRecorded(long token) implements Event {}

  record Completed(long token) implements Event {}

  record State(long token, boolean done) implements CborSerializable {}

  /** The bare entity: claim (one event), then effect and completion (two events), then stop. */
  static final class FloorItem extends EventSourcedBehavior<Command, Event, State> {
    private final Runnable passivate;

    FloorItem(String id, Runnable passivate) {
      super(PersistenceId.of(KEY.name(), id));
      this.passivate = passivate;
    }

    @Override
    public Recovery recovery() {
      return Recovery.withSnapshotSelectionCriteria(SnapshotSelectionCriteria.none());
    }

    @Override
    public State emptyState() {
      return new State(0, false);
    }

    @Override
    public CommandHandler<Command, Event, State> commandHandler() {
      return newCommandHandlerBuilder()
          .forAnyState()
          .onCommand(
              Claim.class,
              (state, cmd) ->
                  Effect()
                      .persist(new Claimed(state.token() + 1))
                      .thenReply(cmd.replyTo(), s -> s.token()))
          .onCommand(
              Complete.class,
              (state, cmd) ->
                  Effect()
                      .persist(
                          List.of(new EffectRecorded(state.token()), new Completed(state.token())))
                      .thenRun(s -> passivate.run())
                      .thenReply(cmd.replyTo(), s -> s.token()))
          .build();
    }

    @Override
    public EventHandler<State, Event> eventHandler() {
      return newEventHandlerBuilder()
          .forAnyState()
          .onEvent(Claimed.class, (state, e) -> new State(e.token(), false))
          .onEvent(EffectRecorded.class, (state, e) -> state)
          .onEvent(Completed.class, (state, e) -> new State(state.token(), true))
          .build();
    }
  }

  static Result run(
      BenchDatabase db,
      Path workDir,
      int items,
      int warmupItems,
      int concurrency,
      Map<String, String> configOverrides)
      throws Exception {
    Map<String, Object> overrides = FencekeeperBench.nodeOverrides(db, workDir, configOverrides);
    try (FencekeeperNode node =
        FencekeeperNode.builder(NodeConfig.load(Optional.empty(), overrides)).workers(0).start()) {
      node.awaitUp(Duration.ofSeconds(60));
      ClusterSharding sharding = ClusterSharding.get(node.system());
      sharding.init(
          Entity.of(
              KEY,
              context ->
                  Behaviors.<Command>setup(
                      actor -> {
                        actor.setLoggerName(FloorItem.class);
                        return new FloorItem(
                            context.getEntityId(),
                            () ->
                                context
                                    .getShard()
                                    .tell(new ClusterSharding.Passivate<>(actor.getSelf())));
                      })));
      String prefix = "floor-" + Long.toString(System.currentTimeMillis(), 36);
      drive(sharding, prefix + "-warmup-", warmupItems, concurrency);
      try (ResourceMeter meter = ResourceMeter.start(db.server())) {
        drive(sharding, prefix + "-", items, concurrency);
        ResourceMeter.Measured measured = meter.stop();
        return new Result(
            db.name(),
            items,
            concurrency,
            measured.wallSeconds(),
            items / measured.wallSeconds(),
            measured);
      }
    }
  }

  /** Claim then complete each item, at most {@code concurrency} items in flight. */
  private static void drive(ClusterSharding sharding, String prefix, int items, int concurrency)
      throws Exception {
    Semaphore slots = new Semaphore(concurrency);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Duration timeout = Duration.ofSeconds(30);
    for (int i = 0; i < items && failure.get() == null; i++) {
      slots.acquire();
      var item = sharding.entityRefFor(KEY, prefix + i);
      CompletionStage<Long> claimed = item.ask(Claim::new, timeout);
      claimed
          .thenCompose(token -> item.ask(Complete::new, timeout))
          .whenComplete(
              (token, error) -> {
                if (error != null) {
                  failure.compareAndSet(null, error);
                }
                slots.release();
              });
    }
    if (!slots.tryAcquire(concurrency, 5, TimeUnit.MINUTES)) {
      throw new IllegalStateException("floor bench items did not finish in 5 minutes");
    }
    if (failure.get() != null) {
      throw new IllegalStateException("floor bench item failed", failure.get());
    }
  }
}

package io.fencekeeper.worker;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node that stops (SIGTERM, leaving the cluster, downed) first drains its worker pool: in the
 * first phase of coordinated shutdown, before sharding hands its shards over, the pool takes no
 * more work and its attempts finish or hand their leases back. Without it a leaving node's pool
 * kept pulling work while its shards moved, and the attempts the stopping actor system cut off left
 * their leases to run out and be taken over (measured in RollingRestartProcessTest: 4 of 11 held
 * leases).
 *
 * <p>Not for a node the split-brain resolver downed: the others already count it out and start its
 * shards once their removal margin has passed, so its attempts must not go on writing to its items
 * meanwhile; their leases run out and are taken over, as docs/cluster.md describes.
 */
public final class LeaveOnShutdown {

  private static final Logger log = LoggerFactory.getLogger(LeaveOnShutdown.class);

  private LeaveOnShutdown() {}

  /**
   * The drain gets most of the phase's timeout: the phase's other tasks (closing the permit pools)
   * are immediate, and a phase that times out goes on without waiting.
   */
  public static void register(ActorSystem<?> system, ActorRef<WorkerPool.Command> pool) {
    Duration phase =
        system
            .settings()
            .config()
            .getDuration("pekko.coordinated-shutdown.phases.before-service-unbind.timeout");
    Duration drain = phase.minus(phase.dividedBy(5));
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseBeforeServiceUnbind(),
            "drain-worker-pool",
            () ->
                downed(system)
                    ? CompletableFuture.completedFuture(Done.getInstance())
                    : drain(system, pool, drain));
  }

  /** Whether this node's coordinated shutdown runs because the split-brain resolver downed it. */
  public static boolean downed(ActorSystem<?> system) {
    return CoordinatedShutdown.get(system)
        .getShutdownReason()
        .filter(CoordinatedShutdown.ClusterDowningReason$.MODULE$::equals)
        .isPresent();
  }

  private static CompletionStage<Done> drain(
      ActorSystem<?> system, ActorRef<WorkerPool.Command> pool, Duration drain) {
    long start = System.nanoTime();
    return AskPattern.<WorkerPool.Command, Done>ask(
            pool, WorkerPool.Leave::new, drain, system.scheduler())
        .handle(
            (done, failure) -> {
              Duration took = Duration.ofNanos(System.nanoTime() - start);
              if (failure != null) {
                // what still runs ends with the actor system: its leases run out
                log.warn("worker pool not drained within {}: {}", drain, failure.toString());
              } else {
                log.info("worker pool drained in {} ms", took.toMillis());
              }
              return Done.getInstance();
            });
  }
}

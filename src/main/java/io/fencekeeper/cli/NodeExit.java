package io.fencekeeper.cli;

import io.fencekeeper.worker.LeaveOnShutdown;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * How a long-running node's process ends: when its actor system has terminated, or when its
 * coordinated shutdown has run all its phases and the system still has not terminated (seen in
 * partition tests on a loaded machine: the downed minority ran every phase, every dispatcher was
 * idle, and its process stayed up past the test's 90 s, neither a member nor gone). Pekko's own
 * answer is {@code exit-jvm = on}; the node keeps that off so that embedded nodes (the {@code run}
 * command, tests) never exit their JVM, so {@code serve} bounds the wait itself.
 */
public final class NodeExit {

  /**
   * The exit code of a node the split-brain resolver downed (EX_TEMPFAIL): not a clean stop, so
   * {@code restart: on-failure} (compose) and {@code Restart=on-failure} (systemd) start it again,
   * and it joins as a new incarnation (docs/cluster.md).
   */
  public static final int DOWNED = 75;

  /** What the last phase may take beyond its own timeout before the process ends anyway. */
  static final Duration GRACE = Duration.ofSeconds(5);

  private final ActorSystem<?> system;
  private final CompletableFuture<Void> shutdownOverdue = new CompletableFuture<>();

  private NodeExit(ActorSystem<?> system) {
    this.system = system;
  }

  /** Call before anything can stop the node: a shutdown already under way takes no new task. */
  public static NodeExit watch(ActorSystem<?> system) {
    NodeExit exit = new NodeExit(system);
    Duration overdue =
        system
            .settings()
            .config()
            .getDuration("pekko.coordinated-shutdown.phases.actor-system-terminate.timeout")
            .plus(GRACE);
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseActorSystemTerminate(),
            "serve-ends-when-termination-hangs",
            () -> {
              // runs beside the phase's own terminate task and never delays it
              CompletableFuture.delayedExecutor(overdue.toMillis(), TimeUnit.MILLISECONDS)
                  .execute(() -> exit.shutdownOverdue.complete(null));
              return CompletableFuture.completedFuture(Done.getInstance());
            });
    return exit;
  }

  /** Blocks until the node has ended; its process's exit code: {@link #DOWNED} or 0. */
  public int await() {
    CompletableFuture.anyOf(system.getWhenTerminated().toCompletableFuture(), shutdownOverdue)
        .join();
    if (!system.whenTerminated().isCompleted()) {
      System.err.println(
          "fencekeeper node: its coordinated shutdown has run, its actor system did not terminate"
              + " within "
              + GRACE.toSeconds()
              + " s of the last phase's timeout; the process ends anyway");
    }
    return LeaveOnShutdown.downed(system) ? DOWNED : 0;
  }
}

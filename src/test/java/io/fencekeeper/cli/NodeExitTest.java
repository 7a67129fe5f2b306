package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A {@code serve} process ends when its node's coordinated shutdown has run, even when an actor
 * that never stops keeps the actor system from terminating; a node the resolver downed exits with
 * {@link NodeExit#DOWNED}, so a supervisor's restart-on-failure starts it again.
 */
class NodeExitTest {

  private final CountDownLatch release = new CountDownLatch(1);
  private final CountDownLatch stuckStarted = new CountDownLatch(1);
  private ActorSystem<Void> system;

  @AfterEach
  void tearDown() throws Exception {
    release.countDown();
    if (system != null) {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private void start(boolean withStuckActor) {
    system =
        ActorSystem.create(
            Behaviors.setup(
                ctx -> {
                  if (withStuckActor) {
                    ctx.spawn(stuckOnStop(), "stuck");
                  }
                  return Behaviors.empty();
                }),
            "node-exit",
            ConfigFactory.parseString(
                    "pekko.coordinated-shutdown.phases.actor-system-terminate.timeout = 1s\n"
                        + "pekko.coordinated-shutdown.exit-jvm = off\n"
                        + "pekko.jvm-shutdown-hooks = off")
                .withFallback(ConfigFactory.load()));
    if (withStuckActor) {
      // the guardian spawns it when it starts: a shutdown run before that (a loaded machine) has
      // nothing to wait for, and the system terminates at once
      try {
        assertTrue(stuckStarted.await(60, TimeUnit.SECONDS), "the stuck actor started");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  /** An actor whose stop blocks its thread, as a call that never returns would. */
  private Behavior<Void> stuckOnStop() {
    return Behaviors.setup(
        ctx -> {
          stuckStarted.countDown();
          return Behaviors.receive(Void.class)
              .onSignal(
                  PostStop.class,
                  signal -> {
                    release.await();
                    return Behaviors.same();
                  })
              .build();
        });
  }

  private int awaitExit(NodeExit exit) throws Exception {
    // a deadline for the test, not a figure: the product's bound is the last phase's 1 s + 5 s
    return CompletableFuture.supplyAsync(exit::await).get(60, TimeUnit.SECONDS);
  }

  @Test
  void aDownedNodeWhoseSystemNeverTerminatesStillEndsWithTheDownedCode() throws Exception {
    start(true);
    NodeExit exit = NodeExit.watch(system);

    CoordinatedShutdown.get(system).run(CoordinatedShutdown.clusterDowningReason());

    assertEquals(NodeExit.DOWNED, awaitExit(exit));
    assertFalse(system.whenTerminated().isCompleted(), "the stuck actor still holds the system up");
  }

  @Test
  void aPlainStopEndsWithZeroOnceTheSystemHasTerminated() throws Exception {
    start(false);
    NodeExit exit = NodeExit.watch(system);

    system.terminate();

    assertEquals(0, awaitExit(exit));
    assertTrue(system.whenTerminated().isCompleted());
  }
}

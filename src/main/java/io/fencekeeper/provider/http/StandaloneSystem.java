package io.fencekeeper.provider.http;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystem;

/**
 * A small local actor system for Pekko HTTP outside a node: the {@code sim-provider} process, and a
 * provider or simulated provider that a test or the bench starts on its own. A node's provider runs
 * on the node's own system instead (docs/design.md, "The provider boundary").
 *
 * <p>It reads the libraries' reference settings only, never a node's configuration (no cluster, no
 * journal), and logs through SLF4J at WARNING and above.
 */
public final class StandaloneSystem {

  private static final Duration TERMINATE_WAIT = Duration.ofSeconds(10);

  private StandaloneSystem() {}

  /**
   * Starts a local system whose one dispatcher (Pekko's fork-join pool, about one thread per core)
   * has at most {@code maxThreads} threads.
   */
  public static ActorSystem start(String name, int maxThreads) {
    int max = Math.max(1, maxThreads);
    Config config =
        ConfigFactory.parseMap(
                Map.of(
                    "pekko.actor.provider", "local",
                    "pekko.loggers", List.of("org.apache.pekko.event.slf4j.Slf4jLogger"),
                    "pekko.logging-filter", "org.apache.pekko.event.slf4j.Slf4jLoggingFilter",
                    "pekko.loglevel", "WARNING",
                    "pekko.stdout-loglevel", "OFF",
                    "pekko.actor.default-dispatcher.fork-join-executor.parallelism-min",
                        Math.min(2, max),
                    "pekko.actor.default-dispatcher.fork-join-executor.parallelism-max", max,
                    // one pool for everything, as on a node: no second fork-join pool for internals
                    "pekko.actor.internal-dispatcher", "pekko.actor.default-dispatcher",
                    "pekko.coordinated-shutdown.exit-jvm", "off",
                    // its owner terminates it (the sim-provider process from its own shutdown
                    // hook): Pekko's hook, registered late, only warned while the JVM shut down
                    "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off"))
            .withFallback(ConfigFactory.defaultReference());
    return ActorSystem.create(name, config);
  }

  /** Terminates {@code system} and waits (a bounded while) until it has. */
  public static void terminate(ActorSystem system) {
    system.terminate();
    try {
      system
          .getWhenTerminated()
          .toCompletableFuture()
          .get(TERMINATE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // it goes on terminating in the background; nothing the caller could do about it
    }
  }
}

package io.fencekeeper.archive;

import io.fencekeeper.run.RunCoordinator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.japi.function.Function;

/** A retention pass's questions to the run coordinator, and its waits: on its own thread only. */
final class CoordinatorCalls {

  static final Duration TIMEOUT = Duration.ofSeconds(30);

  private CoordinatorCalls() {}

  static <T> T ask(
      ActorSystem<?> system,
      ActorRef<RunCoordinator.Command> coordinator,
      Function<ActorRef<T>, RunCoordinator.Command> message) {
    return await(AskPattern.ask(coordinator, message, TIMEOUT, system.scheduler()));
  }

  /** Waits for {@code stage} on the calling (blocking) thread; its failure as it was thrown. */
  static <T> T await(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw new UncheckedIOException(io);
      }
      throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
    } catch (TimeoutException e) {
      throw new IllegalStateException("no answer within " + TIMEOUT.toSeconds() + " s", e);
    }
  }
}

package io.fencekeeper.run;

import io.fencekeeper.run.RunCoordinator.ControlReply;
import io.fencekeeper.run.RunCoordinator.CreateReply;
import io.fencekeeper.run.scope.ScopeReader;
import io.fencekeeper.run.scope.ScopeSummary;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * Creating and steering runs from any node (CLI, HTTP API, schedules). Creation reads and validates
 * the scope here, stages it in {@code run_item} under a fresh scope id, then asks the coordinator;
 * a scope that did not become a run (duplicate, conflict, bad input) is discarded again.
 */
public final class RunService {

  /** The request itself is invalid; nothing was created. */
  public static final class InvalidRunRequest extends RuntimeException {
    private final List<String> problems;

    public InvalidRunRequest(List<String> problems) {
      super(String.join("; ", problems));
      this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
      return problems;
    }
  }

  private final ActorSystem<?> system;
  private final ActorRef<RunCoordinator.Command> coordinator;
  private final RunItemStore store;
  private final ScopeReader scopes;
  private final Executor blocking;
  private final Duration askTimeout;

  public RunService(
      ActorSystem<?> system,
      ActorRef<RunCoordinator.Command> coordinator,
      RunItemStore store,
      ScopeReader scopes,
      Executor blocking,
      Duration askTimeout) {
    this.system = system;
    this.coordinator = coordinator;
    this.store = store;
    this.scopes = scopes;
    this.blocking = blocking;
    this.askTimeout = askTimeout;
  }

  /**
   * Creates the run or answers the existing one. Fails with {@link InvalidRunRequest} or a {@code
   * ScopeException} (naming the bad rows) when the input is wrong; nothing is created then.
   */
  public CompletionStage<CreateReply> create(RunRequest request) {
    List<String> problems = request.problems();
    if (!problems.isEmpty()) {
      return CompletableFuture.failedFuture(new InvalidRunRequest(problems));
    }
    return get(request.runId())
        .thenCompose(
            existing -> {
              if (existing.isPresent()) {
                // the run exists: compare without staging the scope again
                return CompletableFuture.supplyAsync(
                        () -> scopes.read(request.scope(), batch -> {}), blocking)
                    .thenCompose(summary -> ask(request, null, summary));
              }
              String scopeId = UUID.randomUUID().toString();
              return CompletableFuture.supplyAsync(() -> stage(scopeId, request), blocking)
                  .thenCompose(summary -> ask(request, scopeId, summary))
                  .whenComplete(
                      (reply, failure) -> {
                        if (failure != null || !(reply instanceof RunCoordinator.Created)) {
                          CompletableFuture.runAsync(() -> store.discard(scopeId), blocking);
                        }
                      });
            });
  }

  private ScopeSummary stage(String scopeId, RunRequest request) {
    AtomicInteger next = new AtomicInteger();
    return scopes.read(
        request.scope(), batch -> store.stage(scopeId, next.getAndAdd(batch.size()), batch));
  }

  private CompletionStage<CreateReply> ask(
      RunRequest request, String scopeId, ScopeSummary summary) {
    return AskPattern.ask(
        coordinator,
        replyTo ->
            new RunCoordinator.CreateRun(
                request, scopeId, summary.count(), summary.digest(), replyTo),
        askTimeout,
        system.scheduler());
  }

  public CompletionStage<Optional<RunView>> get(String runId) {
    return AskPattern.<RunCoordinator.Command, RunCoordinator.RunLookup>ask(
            coordinator,
            replyTo -> new RunCoordinator.GetRun(runId, replyTo),
            askTimeout,
            system.scheduler())
        .thenApply(lookup -> Optional.ofNullable(lookup.run()));
  }

  public CompletionStage<List<RunView>> list() {
    return AskPattern.<RunCoordinator.Command, RunCoordinator.RunList>ask(
            coordinator, RunCoordinator.ListRuns::new, askTimeout, system.scheduler())
        .thenApply(RunCoordinator.RunList::runs);
  }

  public CompletionStage<ControlReply> resume(String runId, Instant newDeadline) {
    return AskPattern.ask(
        coordinator,
        replyTo -> new RunCoordinator.ResumeRun(runId, newDeadline, replyTo),
        askTimeout,
        system.scheduler());
  }

  public CompletionStage<ControlReply> cancel(String runId) {
    return AskPattern.ask(
        coordinator,
        replyTo -> new RunCoordinator.CancelRun(runId, replyTo),
        askTimeout,
        system.scheduler());
  }
}

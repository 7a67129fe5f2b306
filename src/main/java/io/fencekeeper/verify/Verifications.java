package io.fencekeeper.verify;

import io.fencekeeper.Stages;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.budget.PermitPool;
import io.fencekeeper.provider.factory.ProviderCatalog;
import io.fencekeeper.run.RunFilter;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunService;
import io.fencekeeper.run.RunState;
import io.fencekeeper.worker.ItemAttempt.AttemptListener;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Verifying runs from any node (API, CLI, dashboard): starts a verification of an ended run at the
 * keeper singleton, reads its progress and result, and streams its findings from its journal.
 */
public final class Verifications {

  private final ActorSystem<?> system;
  private final ActorRef<VerificationKeeper.Command> keeper;
  private final RunService runs;
  private final Clock clock;
  private final Duration askTimeout;
  private final JdbcReadJournal journal;

  public Verifications(
      ActorSystem<?> system,
      ActorRef<VerificationKeeper.Command> keeper,
      RunService runs,
      Clock clock,
      Duration askTimeout) {
    this.system = system;
    this.keeper = keeper;
    this.runs = runs;
    this.clock = clock;
    this.askTimeout = askTimeout;
    this.journal =
        PersistenceQuery.get(system)
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
  }

  /**
   * The verifications of a node: the keeper singleton (on whichever node is oldest), the spare
   * permits of each provider's budget on this node, and the providers lookups go to (the workers',
   * or built for it on a node without workers, closed when the node stops).
   */
  public static Verifications start(
      ActorSystem<?> system,
      VerifySettings settings,
      ItemGateway items,
      RunItemStore store,
      Executor blocking,
      RunService runs,
      ProviderCatalog catalog,
      Map<String, Provider> workerProviders,
      Map<String, PermitPool> pools,
      Clock clock,
      AttemptListener listener) {
    BiConsumer<Duration, Runnable> later =
        (delay, task) -> system.scheduler().scheduleOnce(delay, task, system.executionContext());
    Map<String, SparePermits> spare = new TreeMap<>();
    pools.forEach(
        (name, pool) ->
            spare.put(
                name,
                new SparePermits(
                    SparePermits.of(pool), settings.maxInFlight(), System::nanoTime, later)));
    LookupProviders providers =
        new LookupProviders(system, catalog, workerProviders, settings.maxInFlight());
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
            "close-verification-providers",
            () -> {
              providers.close();
              return CompletableFuture.completedFuture(Done.getInstance());
            });
    VerifyDependencies deps =
        new VerifyDependencies(
            items,
            store,
            blocking,
            providers,
            name -> Optional.ofNullable(spare.get(name)),
            later,
            clock,
            settings,
            listener,
            // the runs that ended most recently: a page, never the whole history
            () ->
                runs.list(
                        new RunFilter(
                            java.util.EnumSet.of(
                                RunState.SUCCEEDED,
                                RunState.PARTIAL,
                                RunState.FAILED,
                                RunState.CANCELLED),
                            null,
                            null,
                            null,
                            null,
                            RunFilter.MAX_LIMIT))
                    .thenApply(RunService.RunPage::runs));
    ActorRef<VerificationKeeper.Command> keeper = VerificationKeeper.initSingleton(system, deps);
    return new Verifications(system, keeper, runs, clock, Duration.ofSeconds(30));
  }

  /**
   * A seed for a sample nobody chose one for: stated in the result, so it can be drawn again; below
   * 2^53, so that JSON readers that hold numbers as doubles (the dashboard) read it exactly.
   */
  static long newSeed() {
    return ThreadLocalRandom.current().nextLong(1, 1L << 53);
  }

  /**
   * Verifies the run: every item ({@code sample} 0), or a sample of {@code sample} items drawn with
   * {@code seed} (a new one when empty). Refused when the run is unknown or has not ended.
   */
  public CompletionStage<VerificationKeeper.StartReply> start(
      String runId, long sample, OptionalLong seed) {
    return runs.get(runId)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return refused("unknown_run", "no run " + runId);
              }
              var run = found.get();
              if (!run.state().ended()) {
                return refused(
                    "run_not_ended",
                    "run " + runId + " is " + run.state() + ": only an ended run can be verified");
              }
              if (run.scopeId() == null) {
                // its staging failed: no scope, no provider, no item ever ran
                return refused(
                    "run_never_ran",
                    "run " + runId + " never ran (its scope was not staged): nothing to verify");
              }
              VerificationPlan plan =
                  VerificationPlan.of(
                      run, sample, seed.orElseGet(Verifications::newSeed), false, clock.instant());
              return this.<VerificationKeeper.StartReply>ask(
                  replyTo -> new VerificationKeeper.Start(plan, replyTo));
            });
  }

  private static CompletionStage<VerificationKeeper.StartReply> refused(
      String error, String message) {
    return CompletableFuture.completedFuture(new VerificationKeeper.Refused(error, message));
  }

  /** One verification of the run ({@code number} 0: the latest), with its first findings. */
  public CompletionStage<Optional<VerificationView>> get(String runId, int number) {
    return this.<VerificationKeeper.Answer>ask(
            replyTo -> new VerificationKeeper.Get(runId, number, replyTo))
        .thenApply(answer -> Optional.ofNullable(answer.view()));
  }

  /** Every verification of the run, newest first, without findings. */
  public CompletionStage<List<VerificationView>> list(String runId) {
    return this.<VerificationKeeper.Listing>ask(
            replyTo -> new VerificationKeeper.ListOf(runId, replyTo))
        .thenApply(VerificationKeeper.Listing::verifications);
  }

  /**
   * The latest verification of every run that has one (for metrics: a scrape must not wait long for
   * a keeper that is moving).
   */
  public CompletionStage<List<VerificationView>> latestOfEveryRun() {
    return this.<VerificationKeeper.Listing>ask(
            replyTo -> new VerificationKeeper.ListOf(null, replyTo), SCRAPE_TIMEOUT)
        .thenApply(VerificationKeeper.Listing::verifications);
  }

  static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(5);

  /**
   * Every finding of a verification (discrepancies and resolutions) in scope order, read from its
   * journal as it streams: a verification that found a million costs no memory to export.
   */
  public Source<Finding, NotUsed> findings(VerificationView view) {
    String id = view.runId() + "#" + view.number();
    return journal
        .currentEventsByPersistenceId(Verification.persistenceId(id).id(), 0L, Long.MAX_VALUE)
        .mapConcat(
            envelope ->
                envelope.event() instanceof Verification.Checkpointed checkpoint
                    ? checkpoint.findings()
                    : List.of());
  }

  private <T> CompletionStage<T> ask(
      org.apache.pekko.japi.function.Function<ActorRef<T>, VerificationKeeper.Command> message) {
    return ask(message, askTimeout);
  }

  private <T> CompletionStage<T> ask(
      org.apache.pekko.japi.function.Function<ActorRef<T>, VerificationKeeper.Command> message,
      Duration timeout) {
    return Stages.on(
        AskPattern.<VerificationKeeper.Command, T>ask(keeper, message, timeout, system.scheduler()),
        system.executionContext());
  }
}

package io.fencekeeper.run;

import io.fencekeeper.DaemonThreads;
import io.fencekeeper.Stages;
import io.fencekeeper.dispatch.ScopeRows;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunCoordinator.ControlReply;
import io.fencekeeper.run.RunCoordinator.CreateReply;
import io.fencekeeper.run.governor.FleetView;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.run.scope.ScopeReader;
import io.fencekeeper.run.scope.ScopeSummary;
import io.fencekeeper.worker.AttemptResult;
import io.fencekeeper.worker.WorkProtocol;
import java.io.InputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creating and steering runs from any node (CLI, HTTP API, schedules). Creation reads and validates
 * the scope here, stages it in {@code run_item} under a fresh scope id, then asks the coordinator;
 * a scope that did not become a run (duplicate, conflict, bad input) is discarded again.
 */
public final class RunService {

  private static final Logger log = LoggerFactory.getLogger(RunService.class);

  /** The request itself is invalid; nothing was created. */
  public static final class InvalidRunRequest extends RuntimeException {
    private final List<String> problems;
    private final String field;

    public InvalidRunRequest(List<String> problems) {
      this(problems, null);
    }

    /** {@code field} names the one parameter that is wrong, when it is one. */
    public InvalidRunRequest(List<String> problems, String field) {
      super(String.join("; ", problems));
      this.problems = List.copyOf(problems);
      this.field = field;
    }

    public List<String> problems() {
      return problems;
    }

    public Optional<String> field() {
      return Optional.ofNullable(field);
    }
  }

  private final ActorSystem<?> system;
  private final ActorRef<RunCoordinator.Command> coordinator;
  private final RunItemStore store;
  private final EndedRuns ended;
  private final ScopeReader scopes;
  private final Executor blocking;
  private final Duration askTimeout;
  private final ItemGateway items;
  private final Clock clock;
  private final Duration maxRunLength;
  private final StagingTable stagingTable;
  private final RunStaging staging;
  private final ExecutorService stagingThreads;
  private final AtomicBoolean watching = new AtomicBoolean();
  private final Set<String> providers;
  private final ClaimNext claimNext;

  /**
   * How often a node looks for stagings whose stager is gone ({@link #resumeInterruptedStagings}):
   * one query of {@code run_staging}, an empty table while nothing stages.
   */
  public static final Duration STAGING_WATCH = Duration.ofSeconds(10);

  /** {@link #create(RunRequest)} waits for staging to end, however long a scope takes. */
  private static final Duration WAIT_TO_THE_END = Duration.ofDays(365);

  public RunService(
      ActorSystem<?> system,
      ActorRef<RunCoordinator.Command> coordinator,
      RunItemStore store,
      EndedRuns ended,
      ScopeReader scopes,
      ItemGateway items,
      Executor blocking,
      Duration askTimeout,
      Clock clock,
      Duration maxRunLength,
      Set<String> providers,
      ItemShards shards,
      Duration maxLease) {
    this.system = system;
    this.providers = Set.copyOf(providers);
    this.clock = clock;
    this.maxRunLength = maxRunLength;
    this.items = items;
    this.coordinator = coordinator;
    this.store = store;
    this.ended = ended;
    this.scopes = scopes;
    this.blocking = blocking;
    this.askTimeout = askTimeout;
    this.stagingTable = new StagingTable(store.dataSource());
    this.claimNext =
        new ClaimNext(
            system,
            items,
            new LeaseRequests(store.dataSource()),
            blocking,
            askTimeout,
            clock,
            maxLease);
    this.stagingThreads =
        Executors.newCachedThreadPool(DaemonThreads.named("fencekeeper-scope-staging"));
    Cluster cluster = Cluster.get(system);
    RunStaging.Node self =
        new RunStaging.Node(
            system.address().toString(),
            Long.toString(cluster.selfMember().uniqueAddress().longUid()));
    this.staging =
        new RunStaging(
            store,
            stagingTable,
            scopes,
            new RunStaging.Coordinator() {
              @Override
              public CompletionStage<Optional<RunView>> get(String runId) {
                return heldOrFiled(runId);
              }

              @Override
              public CompletionStage<CreateReply> create(
                  RunRequest request, String scopeId, ScopeSummary summary) {
                return ask(request, scopeId, summary);
              }
            },
            // staging a scope holds a thread for as long as the scope takes to read: its own
            // threads, so that the dispatchers' page reads never queue behind it
            stagingThreads,
            idleTimers(),
            self,
            row -> stagerAtWork(cluster, self, row),
            shards,
            StagedScope.STEP_ROWS,
            clock);
  }

  /**
   * Whether a staging row's stager may still be at work though its heartbeat is old: this node's
   * own holder that it still runs, or a stager on a member of the cluster that is up and reachable
   * (its heartbeat may only wait for the database). A member that left, was downed or restarted (a
   * new unique id) runs no stager of before.
   */
  private boolean stagerAtWork(Cluster cluster, RunStaging.Node self, StagingTable.Row row) {
    if (row.incarnation() == null) {
      return false; // written by an older node: its heartbeat is all there is
    }
    if (row.incarnation().equals(self.incarnation()) && row.node().equals(self.address())) {
      return staging.runs(row.holder());
    }
    CurrentClusterState state = cluster.state();
    for (Member member : state.getMembers()) {
      if (member.address().toString().equals(row.node())
          && Long.toString(member.uniqueAddress().longUid()).equals(row.incarnation())) {
        MemberStatus status = member.status();
        boolean up =
            status == MemberStatus.up()
                || status == MemberStatus.weaklyUp()
                || status == MemberStatus.joining()
                || status == MemberStatus.leaving();
        return up && !state.getUnreachable().contains(member);
      }
    }
    return false;
  }

  /**
   * Takes over every staging whose stager is gone and goes on with it from its last committed step
   * (docs/design.md, "Staging a scope"): the node calls this every few seconds. A look that is
   * still going on when the next is due is not started twice.
   */
  public void resumeInterruptedStagings() {
    if (!watching.compareAndSet(false, true)) {
      return;
    }
    CompletableFuture.runAsync(staging::resumeInterrupted, stagingThreads)
        .whenComplete(
            (done, failure) -> {
              watching.set(false);
              if (failure != null) {
                // the database may be away: the next look tries again
                log.debug("looking for interrupted stagings failed: {}", failure.toString());
              }
            });
  }

  /** Heartbeats and patience timers; its thread ends when no staging needs it. */
  private static ScheduledThreadPoolExecutor idleTimers() {
    ScheduledThreadPoolExecutor timers =
        new ScheduledThreadPoolExecutor(1, DaemonThreads.named("fencekeeper-staging-timer"));
    timers.setKeepAliveTime(30, TimeUnit.SECONDS);
    timers.allowCoreThreadTimeOut(true);
    timers.setRemoveOnCancelPolicy(true);
    return timers;
  }

  /**
   * Creates the run or answers the existing one, however long staging takes. Fails with {@link
   * InvalidRunRequest} or a {@code ScopeException} (naming the bad rows) when the input is wrong;
   * nothing is created then.
   */
  public CompletionStage<CreateReply> create(RunRequest request) {
    return create(request, null);
  }

  /**
   * As {@link #create(RunRequest)}, for a request whose scope is {@link Scope.Upload}: the accounts
   * are read from {@code upload} (CSV with the {@code accountId,cursor} header) as they arrive,
   * never held whole. The caller closes the stream.
   */
  public CompletionStage<CreateReply> create(RunRequest request, InputStream upload) {
    return create(request, upload, WAIT_TO_THE_END)
        .thenApply(
            outcome -> {
              if (outcome instanceof CreateOutcome.Answered answered) {
                return answered.reply();
              }
              throw new IllegalStateException(
                  "run " + request.runId() + " is still staging after " + WAIT_TO_THE_END);
            });
  }

  /**
   * Creates the run (or answers the existing one) if that takes at most {@code patience}; otherwise
   * answers it STAGING while staging goes on. A create of the same request while one is staging, on
   * any node, joins it instead of staging a second copy. {@code upload} is the CSV of a {@link
   * Scope.Upload} request, else null; the caller closes it.
   */
  public CompletionStage<CreateOutcome> create(
      RunRequest request, InputStream upload, Duration patience) {
    List<String> problems = request.problems();
    if ((request.scope() instanceof Scope.Upload) != (upload != null)) {
      problems = new java.util.ArrayList<>(problems);
      problems.add(
          upload == null
              ? "an upload scope needs the uploaded CSV"
              : "an uploaded CSV needs the upload scope");
    }
    if (!problems.isEmpty()) {
      return CompletableFuture.failedFuture(new InvalidRunRequest(problems));
    }
    Optional<String> badDeadline = deadlineProblem(request.deadline());
    if (badDeadline.isPresent()) {
      return CompletableFuture.failedFuture(
          new InvalidRunRequest(List.of(badDeadline.get()), "deadline"));
    }
    if (!providers.contains(request.providerName())) {
      return CompletableFuture.failedFuture(
          new InvalidRunRequest(
              List.of(
                  "provider '"
                      + request.providerName()
                      + "' is not configured; known: "
                      + new java.util.TreeSet<>(providers)),
              "provider"));
    }
    return staging.create(request, upload, patience);
  }

  private CompletionStage<CreateReply> ask(
      RunRequest request, String scopeId, ScopeSummary summary) {
    return Stages.on(
        AskPattern.ask(
            coordinator,
            replyTo ->
                new RunCoordinator.CreateRun(
                    request, scopeId, summary.count(), summary.digest(), replyTo),
            askTimeout,
            system.scheduler()),
        system.executionContext());
  }

  /**
   * The lease API for external workers: the next item of a running run, claimed for {@code
   * workerId}; empty when nothing is claimable right now (or the run is not running).
   */
  public CompletionStage<Optional<WorkItem.Claimed>> claimNext(
      String runId, String workerId, Duration lease) {
    return claimNext(runId, workerId, lease, 5, null)
        .thenApply(
            answer ->
                answer instanceof ClaimNext.Granted granted
                    ? Optional.of(granted.claimed())
                    : Optional.empty());
  }

  /**
   * claim-next (docs/external-workers.md): the next item of the run claimed for {@code workerId},
   * or why none is now. {@code requestId}: the client's name for this claim (null: none), repeated
   * after a lost answer to get the same lease; {@code maxAttempts}: the run's.
   */
  public CompletionStage<ClaimNext.Answer> claimNext(
      String runId, String workerId, Duration lease, int maxAttempts, String requestId) {
    return claimNext.claim(runId, workerId, lease, maxAttempts, requestId);
  }

  /**
   * A lease API holder's command ended its attempt at {@code item} ({@code now}: the item as its
   * answer shows it): the run's dispatchers learn it, so the one that handed the item out through
   * claim-next settles it now (docs/external-workers.md), not a lease later. Best effort: without
   * it the dispatcher asks the item once the lease it gave has run out. Completes once the run's
   * dispatchers were told (never fails): a claim-next sent after the holder's answer finds its
   * dispatcher knowing (a run past its failure limit hands nothing more out).
   */
  public CompletionStage<Void> attemptEnded(
      ItemId item, io.fencekeeper.item.ItemView now, String scopeId) {
    AttemptResult result =
        switch (now.status()) {
          case DONE -> new AttemptResult.Done();
          case FAILED -> new AttemptResult.Failed(now.lastError());
          case PENDING ->
              new AttemptResult.RetryAt(now.retryAt() != null ? now.retryAt() : clock.instant());
          default -> null; // still leased, or closed or quarantined by someone else: theirs to say
        };
    return tellDispatchers(item, result, scopeId);
  }

  /**
   * A claim of {@code item} by id was answered {@code reply}: one that found the item DONE, FAILED
   * or QUARANTINED (attempts used up, or its last holders vanished) is told to the run's
   * dispatchers, so the run's counts show it and a run worked only by id ends
   * (docs/external-workers.md), as {@link #attemptEnded} does for the holder's last command.
   */
  public CompletionStage<Void> claimAnswered(ItemId item, WorkItem.Reply reply, String scopeId) {
    if (reply instanceof WorkItem.NotClaimable refused) {
      String reason = refused.reason() != null ? refused.reason() : "item " + refused.status();
      return tellDispatchers(
          item,
          switch (refused.status()) {
            case DONE -> new AttemptResult.Done();
            case FAILED -> new AttemptResult.Failed(reason);
            case QUARANTINED -> new AttemptResult.Quarantined(reason);
            default -> null; // open, or closed by the coordinator, which counts it itself
          },
          scopeId);
    }
    return CompletableFuture.completedFuture(null);
  }

  /**
   * The item's status goes to {@code run_item} first (a dispatcher that pages the item in later
   * starts from it: the run's counts and its end see an item no dispatcher handed out), then to
   * every dispatcher of the run (the one that handed it out, or has it queued, settles it now).
   */
  private CompletionStage<Void> tellDispatchers(ItemId item, AttemptResult result, String scopeId) {
    if (result == null) {
      return CompletableFuture.completedFuture(null);
    }
    Short status =
        result instanceof AttemptResult.Done
            ? Short.valueOf(ScopeRows.DONE)
            : result instanceof AttemptResult.Failed
                ? Short.valueOf(ScopeRows.FAILED)
                : result instanceof AttemptResult.Quarantined
                    ? Short.valueOf(ScopeRows.QUARANTINED)
                    : null;
    return CompletableFuture.runAsync(
            () -> {
              if (status != null) {
                store.markStatus(scopeId, item.accountId(), item.cursor(), status);
              }
            },
            blocking)
        .handle(
            (cached, failure) -> {
              if (failure != null) {
                // the dispatchers still hear of it; one that pages the item in later asks the item
                log.warn("caching the status of {} failed: {}", item, failure.toString());
              }
              return null;
            })
        .thenCompose(
            cached -> tellListed(new WorkProtocol.SettledElsewhere(item, result), LISTING_TRIES))
        .exceptionally(failure -> null);
  }

  /**
   * How often a settlement is told again, a second apart, while the run has no dispatcher listed:
   * one that starts meanwhile may have paged the item in before its status was cached.
   */
  private static final int LISTING_TRIES = 5;

  private CompletionStage<Void> tellListed(WorkProtocol.SettledElsewhere settled, int tries) {
    var key = WorkProtocol.serviceKeyOf(settled.itemId().runId());
    return Stages.on(
            AskPattern.<Receptionist.Command, Receptionist.Listing>ask(
                system.receptionist(),
                replyTo -> Receptionist.find(key, replyTo),
                askTimeout,
                system.scheduler()),
            system.executionContext())
        .thenAccept(
            listing -> {
              var dispatchers = listing.getServiceInstances(key);
              dispatchers.forEach(d -> d.tell(settled));
              if (dispatchers.isEmpty() && tries > 1) {
                system
                    .scheduler()
                    .scheduleOnce(
                        Duration.ofSeconds(1),
                        () -> tellListed(settled, tries - 1),
                        system.executionContext());
              }
            });
  }

  /**
   * The run as the coordinator holds it, as filed once it ended, or, before the coordinator knows
   * it, as it is being staged (STAGING, or FAILED with the reason when staging failed after the
   * client was told STAGING).
   */
  public CompletionStage<Optional<RunView>> get(String runId) {
    return heldOrFiled(runId)
        .thenCompose(
            run ->
                run.isPresent()
                    ? CompletableFuture.completedFuture(run)
                    : CompletableFuture.supplyAsync(
                        () -> stagingTable.find(runId).map(StagingRows::view), blocking));
  }

  private CompletionStage<Optional<RunView>> heldOrFiled(String runId) {
    return held(runId)
        .thenCompose(
            run ->
                run.isPresent()
                    ? CompletableFuture.completedFuture(run)
                    : CompletableFuture.supplyAsync(
                        () -> ended.find(runId).map(EndedRuns.Filed::view), blocking));
  }

  private CompletionStage<Optional<RunView>> held(String runId) {
    return Stages.on(
            AskPattern.<RunCoordinator.Command, RunCoordinator.RunLookup>ask(
                coordinator,
                replyTo -> new RunCoordinator.GetRun(runId, replyTo),
                askTimeout,
                system.scheduler()),
            system.executionContext())
        .thenApply(lookup -> Optional.ofNullable(lookup.run()));
  }

  /**
   * The runs that have not ended (and those that ended a moment ago, not yet filed), then the runs
   * being staged: what a live view polls, never growing with history.
   */
  public CompletionStage<List<RunView>> active() {
    return heldRuns()
        .thenCompose(
            runs ->
                CompletableFuture.supplyAsync(
                    () -> {
                      List<RunView> all = new ArrayList<>(runs);
                      all.addAll(staging(runIds(runs)));
                      return all;
                    },
                    blocking));
  }

  private CompletionStage<List<RunView>> heldRuns() {
    return Stages.on(
            AskPattern.<RunCoordinator.Command, RunCoordinator.RunList>ask(
                coordinator, RunCoordinator.ListRuns::new, askTimeout, system.scheduler()),
            system.executionContext())
        .thenApply(RunCoordinator.RunList::runs);
  }

  /** The runs still being staged that the coordinator does not know yet. */
  private List<RunView> staging(Set<String> known) {
    return stagingTable.all().stream()
        .filter(row -> !known.contains(row.runId()))
        .map(StagingRows::view)
        .toList();
  }

  private static Set<String> runIds(List<RunView> runs) {
    Set<String> ids = new HashSet<>();
    runs.forEach(run -> ids.add(run.runId()));
    return ids;
  }

  /** One page of a list of runs, and where the next page starts (empty: this was the last). */
  public record RunPage(List<RunView> runs, Optional<RunFilter.Cursor> next) {}

  /**
   * The runs {@code filter} selects, newest first, one page: the runs the coordinator holds, those
   * being staged and the filed ones, each once (the coordinator's view of a run wins over a filed
   * one: a resumed run is held again).
   */
  public CompletionStage<RunPage> list(RunFilter filter) {
    return heldRuns()
        .thenCompose(
            runs ->
                CompletableFuture.supplyAsync(
                    () -> {
                      Map<String, RunView> merged = new HashMap<>();
                      runs.stream().filter(filter::matches).forEach(r -> merged.put(r.runId(), r));
                      staging(runIds(runs)).stream()
                          .filter(filter::matches)
                          .forEach(r -> merged.putIfAbsent(r.runId(), r));
                      // enough filed runs for a full page whatever the others take of it
                      for (EndedRuns.Filed filed :
                          ended.page(filter, filter.limit() + merged.size())) {
                        merged.putIfAbsent(filed.record().runId(), filed.view());
                      }
                      List<RunView> sorted = new ArrayList<>(merged.values());
                      sorted.sort(RunFilter.NEWEST_FIRST);
                      List<RunView> page =
                          sorted.subList(0, Math.min(filter.limit(), sorted.size()));
                      Optional<RunFilter.Cursor> next =
                          sorted.size() > filter.limit()
                              ? Optional.of(RunFilter.Cursor.of(page.get(page.size() - 1)))
                              : Optional.empty();
                      return new RunPage(List.copyOf(page), next);
                    },
                    blocking));
  }

  /** Which of {@code runIds} exist (held, filed or being staged): for the nightly schedules. */
  public CompletionStage<Set<String>> existing(Set<String> runIds) {
    List<CompletableFuture<Optional<RunView>>> lookups =
        runIds.stream().map(id -> get(id).toCompletableFuture()).toList();
    return CompletableFuture.allOf(lookups.toArray(CompletableFuture[]::new))
        .thenApply(
            done -> {
              Set<String> found = new HashSet<>();
              lookups.forEach(l -> l.join().ifPresent(run -> found.add(run.runId())));
              return found;
            });
  }

  /**
   * A deadline must be ahead, and within {@code fencekeeper.max-run-length}: a deadline years away
   * is a typo, and one at the end of time overflowed every duration computed from it.
   */
  Optional<String> deadlineProblem(Instant deadline) {
    Instant now = clock.instant();
    if (!deadline.isAfter(now)) {
      return Optional.of("deadline " + deadline + " is not in the future");
    }
    if (deadline.isAfter(now.plus(maxRunLength))) {
      return Optional.of(
          "deadline "
              + deadline
              + " is further away than fencekeeper.max-run-length "
              + maxRunLength);
    }
    return Optional.empty();
  }

  public CompletionStage<ControlReply> resume(String runId, Instant newDeadline) {
    Optional<String> badDeadline = deadlineProblem(newDeadline);
    if (badDeadline.isPresent()) {
      return CompletableFuture.completedFuture(
          new RunCoordinator.ControlRefused("invalid_deadline", badDeadline.get()));
    }
    return Stages.on(
        AskPattern.ask(
            coordinator,
            replyTo -> new RunCoordinator.ResumeRun(runId, newDeadline, replyTo),
            askTimeout,
            system.scheduler()),
        system.executionContext());
  }

  /** Changes the cluster-wide governor limits; validated by the settings record itself. */
  public CompletionStage<RunCoordinator.GovernorReply> setGovernor(GovernorSettings settings) {
    return Stages.on(
        AskPattern.<RunCoordinator.Command, RunCoordinator.GovernorReply>ask(
            coordinator,
            replyTo -> new RunCoordinator.SetGovernor(settings, replyTo),
            askTimeout,
            system.scheduler()),
        system.executionContext());
  }

  public CompletionStage<RunCoordinator.GovernorReply> governor() {
    return Stages.on(
        AskPattern.<RunCoordinator.Command, RunCoordinator.GovernorReply>ask(
            coordinator, RunCoordinator.GetGovernor::new, askTimeout, system.scheduler()),
        system.executionContext());
  }

  /** The nodes the fleet wants now (docs/cluster.md, "The fleet follows the window"). */
  public CompletionStage<FleetView> fleet() {
    return Stages.on(
        AskPattern.<RunCoordinator.Command, FleetView>ask(
            coordinator, RunCoordinator.GetFleet::new, askTimeout, system.scheduler()),
        system.executionContext());
  }

  public CompletionStage<ControlReply> cancel(String runId) {
    return Stages.on(
        AskPattern.ask(
            coordinator,
            replyTo -> new RunCoordinator.CancelRun(runId, replyTo),
            askTimeout,
            system.scheduler()),
        system.executionContext());
  }
}

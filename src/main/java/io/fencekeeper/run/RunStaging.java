package io.fencekeeper.run;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.run.scope.ScopeReader;
import io.fencekeeper.run.scope.ScopeSink;
import io.fencekeeper.run.scope.ScopeSummary;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creating a run whose scope may take longer to stage than a client waits. The staging node records
 * what it stages in {@code run_staging} ({@link StagingTable}) with a heartbeat, outside the
 * coordinator; a create that finds a live staging of the same request joins it instead of staging a
 * second copy, one that finds a dead one (no heartbeat for {@link #ABANDONED_AFTER}) starts over
 * and discards the old scope. The caller says how long it waits ({@code patience}); past that it is
 * told the run is STAGING, and a later create answers the created run.
 *
 * <p>Reads in order: look at the staging row, then the run → join a live staging, or claim the run
 * → stage the scope with a heartbeat → confirm the claim → ask the coordinator → clear the row.
 */
final class RunStaging {

  private static final Logger log = LoggerFactory.getLogger(RunStaging.class);

  static final Duration HEARTBEAT = Duration.ofSeconds(1);
  static final Duration ABANDONED_AFTER = Duration.ofSeconds(30);
  private static final Duration JOIN_POLL = Duration.ofMillis(200);

  /** The coordinator as staging needs it. */
  interface Coordinator {
    CompletionStage<Optional<RunView>> get(String runId);

    CompletionStage<RunCoordinator.CreateReply> create(
        RunRequest request, String scopeId, ScopeSummary summary);
  }

  private final RunItemStore store;
  private final StagingTable table;
  private final ScopeReader scopes;
  private final Coordinator coordinator;
  private final Executor staging;
  private final ScheduledExecutorService timers;
  private final String node;
  private final ItemShards shards;

  RunStaging(
      RunItemStore store,
      StagingTable table,
      ScopeReader scopes,
      Coordinator coordinator,
      Executor staging,
      ScheduledExecutorService timers,
      String node,
      ItemShards shards) {
    this.store = store;
    this.table = table;
    this.scopes = scopes;
    this.coordinator = coordinator;
    this.staging = staging;
    this.timers = timers;
    this.node = node;
    this.shards = shards;
  }

  /**
   * Creates the run, answers the existing one, or, past {@code patience}, answers it STAGING. For
   * an upload ({@code upload} not null) patience starts once the body has been read: an HTTP answer
   * before that would cut the client's upload off.
   */
  CompletionStage<CreateOutcome> create(RunRequest request, InputStream upload, Duration patience) {
    return look(request, upload, patience);
  }

  /**
   * The staging row first, then the coordinator: a staging that ends has the coordinator know the
   * run before it removes its row, so a row found gone means the run is known if it was created.
   * Asked the other way round, a staging that ended between the two looks showed neither, and a
   * second copy of a run that exists was staged (RunStagingTest).
   */
  private CompletionStage<CreateOutcome> look(
      RunRequest request, InputStream upload, Duration patience) {
    return CompletableFuture.supplyAsync(() -> table.find(request.runId()), staging)
        .thenCompose(
            row ->
                coordinator
                    .get(request.runId())
                    .thenCompose(
                        existing ->
                            existing.isPresent()
                                ? compareWithExisting(request, upload)
                                : stageOrJoin(request, upload, row, patience)));
  }

  /**
   * The run exists: compare with it without staging again. A file or query is not read again either
   * (that can take as long as the first staging, past any client's patience): the same path or
   * query counts as the same scope. Inline and uploaded accounts are compared by digest; their
   * accounts were checked for repeats when the run was staged, so a digest-only read will do.
   */
  private CompletionStage<CreateOutcome> compareWithExisting(
      RunRequest request, InputStream upload) {
    if (request.scope() instanceof Scope.Csv || request.scope() instanceof Scope.Sql) {
      return coordinator
          .create(request, null, new ScopeSummary(0, null))
          .thenApply(CreateOutcome.Answered::new);
    }
    return CompletableFuture.supplyAsync(
            () -> read(request, upload, ScopeSink.digestOnly()), staging)
        .thenCompose(summary -> coordinator.create(request, null, summary))
        .thenApply(CreateOutcome.Answered::new);
  }

  private CompletionStage<CreateOutcome> stageOrJoin(
      RunRequest request, InputStream upload, Optional<StagingTable.Row> row, Duration patience) {
    String digest = StagingRows.requestDigest(request);
    if (row.isPresent() && StagingRows.isLive(row.get())) {
      StagingTable.Row live = row.get();
      if (!live.requestDigest().equals(digest)) {
        return CompletableFuture.completedFuture(
            new CreateOutcome.Answered(
                new RunCoordinator.Conflict(
                    "run "
                        + request.runId()
                        + " is being staged with different parameters: "
                        + String.join(", ", StagingRows.differences(live, request)),
                    StagingRows.view(live))));
      }
      return join(request, upload, patience);
    }
    StagingTable.Claim claim =
        new StagingTable.Claim(
            request.runId(),
            UUID.randomUUID().toString(),
            digest,
            request,
            StagingRows.kind(request),
            node);
    return CompletableFuture.supplyAsync(
            () -> row.isEmpty() ? table.insert(claim) : table.takeOver(row.get().scopeId(), claim),
            staging)
        .thenCompose(
            claimed -> {
              if (!claimed) {
                // another node claimed it between our read and our write: look again
                return look(request, upload, patience);
              }
              if (row.isPresent()) {
                String abandoned = row.get().scopeId();
                log.warn(
                    "run {}: taking over an abandoned or failed staging (scope {}, node {})",
                    request.runId(),
                    abandoned,
                    row.get().node());
                CompletableFuture.runAsync(() -> store.discard(abandoned), staging);
              }
              return stage(claim, request, upload, patience);
            });
  }

  /**
   * Another create of the same request is staging: this one does not stage. An upload's body is
   * read digest-only (bounded memory) so the client's upload completes; then it waits, within its
   * patience, for the coordinator to know the run and compares with it.
   */
  private CompletionStage<CreateOutcome> join(
      RunRequest request, InputStream upload, Duration patience) {
    CompletionStage<ScopeSummary> body =
        upload == null
            ? CompletableFuture.completedFuture(null)
            : CompletableFuture.supplyAsync(
                () -> scopes.readUpload(upload, ScopeSink.digestOnly()), staging);
    return body.thenCompose(
        summary -> awaitOther(request, summary, System.nanoTime() + patience.toNanos()));
  }

  private CompletionStage<CreateOutcome> awaitOther(
      RunRequest request, ScopeSummary uploaded, long deadline) {
    // the row first, then the coordinator (see look)
    return CompletableFuture.supplyAsync(() -> table.find(request.runId()), staging)
        .thenCompose(
            row ->
                coordinator
                    .get(request.runId())
                    .thenCompose(known -> afterLook(request, uploaded, deadline, row, known)));
  }

  /** What a create that joined does once it has looked at the staging row and the run. */
  private CompletionStage<CreateOutcome> afterLook(
      RunRequest request,
      ScopeSummary uploaded,
      long deadline,
      Optional<StagingTable.Row> row,
      Optional<RunView> known) {
    if (known.isPresent()) {
      if (uploaded != null) {
        return coordinator.create(request, null, uploaded).thenApply(CreateOutcome.Answered::new);
      }
      return compareWithExisting(request, null);
    }
    if (row.isEmpty() || !StagingRows.isLive(row.get())) {
      if (uploaded != null) {
        // this body is read (digest only): it cannot be staged any more
        return CompletableFuture.completedFuture(
            new CreateOutcome.Answered(
                new RunCoordinator.Conflict(
                    "run "
                        + request.runId()
                        + ": the staging this upload waited for ended without a run"
                        + row.map(r -> " (" + StagingRows.view(r).endReason() + ")").orElse("")
                        + "; upload again",
                    null)));
      }
      return stageOrJoin(
          request, null, row, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
    if (System.nanoTime() >= deadline) {
      return CompletableFuture.completedFuture(
          new CreateOutcome.StillStaging(StagingRows.view(row.get())));
    }
    return later(() -> awaitOther(request, uploaded, deadline));
  }

  /** One staging of one claim, answered within the caller's patience or as STAGING. */
  private CompletionStage<CreateOutcome> stage(
      StagingTable.Claim claim, RunRequest request, InputStream upload, Duration patience) {
    // every row is staged with its item's shard: each node pages the shards it hosts
    StagedScope scope =
        new StagedScope(
            store,
            claim.scopeId(),
            account ->
                shards.shardNumber(
                    ItemId.of(
                        request.job(),
                        request.businessDate(),
                        account.accountId(),
                        account.cursor())));
    Instant started = Instant.now();
    Attempt attempt = new Attempt();
    ScheduledFuture<?> heartbeat =
        timers.scheduleAtFixedRate(
            () -> staging.execute(() -> attempt.beat(claim, scope)),
            HEARTBEAT.toMillis(),
            HEARTBEAT.toMillis(),
            TimeUnit.MILLISECONDS);
    // an upload's client is still sending until the body is read: its patience starts after
    // that, and a failed read answers with its failure, never STAGING
    CompletableFuture<Boolean> patienceStarts =
        upload == null ? CompletableFuture.completedFuture(true) : new CompletableFuture<>();
    CompletableFuture<RunCoordinator.CreateReply> done =
        CompletableFuture.supplyAsync(
                () -> {
                  boolean read = false;
                  try {
                    ScopeSummary summary = read(request, upload, attempt.guard(scope));
                    read = true;
                    return summary;
                  } finally {
                    patienceStarts.complete(read);
                  }
                },
                staging)
            .thenApplyAsync(
                summary -> {
                  store.refreshStatistics();
                  // invariant: only the claim's holder asks the coordinator with its scope
                  if (!table.heartbeat(claim.runId(), claim.scopeId(), scope.staged())) {
                    throw new IllegalStateException(
                        "run " + claim.runId() + ": another node took the staging over");
                  }
                  return summary;
                },
                staging)
            .thenCompose(summary -> coordinator.create(request, claim.scopeId(), summary))
            .toCompletableFuture();
    CompletableFuture<CreateOutcome> outcome = new CompletableFuture<>();
    done.whenCompleteAsync(
        (reply, failure) -> {
          heartbeat.cancel(false);
          boolean created = failure == null && reply instanceof RunCoordinator.Created;
          if (!created) {
            store.discard(claim.scopeId());
          }
          if (failure != null && attempt.answeredStaging()) {
            // the client was told STAGING: leave the reason where GET /api/runs/{id} shows it
            table.markFailed(claim.runId(), claim.scopeId(), reason(failure));
          } else {
            table.remove(claim.runId(), claim.scopeId());
          }
          if (failure != null) {
            outcome.completeExceptionally(failure);
          } else {
            outcome.complete(new CreateOutcome.Answered(reply));
          }
        },
        staging);
    patienceStarts.thenAccept(
        start -> {
          if (!start) {
            return;
          }
          timers.schedule(
              () -> {
                if (attempt.announceStaging(done)) {
                  outcome.complete(
                      new CreateOutcome.StillStaging(
                          StagingRows.stagingView(request, started, scope.staged())));
                }
              },
              patience.toNanos(),
              TimeUnit.NANOSECONDS);
        });
    return outcome;
  }

  /** What one staging attempt shares between its reader, its heartbeat and its answer. */
  private final class Attempt {
    private volatile boolean lost;
    private boolean answeredStaging;

    void beat(StagingTable.Claim claim, StagedScope scope) {
      try {
        if (!lost && !table.heartbeat(claim.runId(), claim.scopeId(), scope.staged())) {
          lost = true;
        }
      } catch (RuntimeException e) {
        log.warn("run {}: staging heartbeat failed: {}", claim.runId(), e.toString());
      }
    }

    /** Stops staging once another node has taken the run over. */
    ScopeSink guard(StagedScope scope) {
      return new ScopeSink() {
        @Override
        public List<Long> stage(List<Positioned> batch) {
          if (lost) {
            throw new IllegalStateException("another node took the staging over");
          }
          return scope.stage(batch);
        }

        @Override
        public long firstPositionOf(io.fencekeeper.run.scope.AccountCursor account) {
          return scope.firstPositionOf(account);
        }
      };
    }

    synchronized boolean announceStaging(CompletableFuture<?> done) {
      if (done.isDone()) {
        return false;
      }
      answeredStaging = true;
      return true;
    }

    synchronized boolean answeredStaging() {
      return answeredStaging;
    }
  }

  private ScopeSummary read(RunRequest request, InputStream upload, ScopeSink sink) {
    return upload != null ? scopes.readUpload(upload, sink) : scopes.read(request.scope(), sink);
  }

  private <T> CompletionStage<T> later(java.util.function.Supplier<CompletionStage<T>> next) {
    CompletableFuture<T> result = new CompletableFuture<>();
    timers.schedule(
        () ->
            next.get()
                .whenComplete(
                    (value, failure) -> {
                      if (failure != null) {
                        result.completeExceptionally(failure);
                      } else {
                        result.complete(value);
                      }
                    }),
        JOIN_POLL.toMillis(),
        TimeUnit.MILLISECONDS);
    return result;
  }

  private static String reason(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
  }
}

package io.fencekeeper.run;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.run.scope.ScopeReader;
import io.fencekeeper.run.scope.ScopeSink;
import io.fencekeeper.run.scope.ScopeSummary;
import java.io.InputStream;
import java.math.BigInteger;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creating a run whose scope may take longer to stage than a client waits. The staging node records
 * what it stages in {@code run_staging} ({@link StagingTable}) with a heartbeat, outside the
 * coordinator; a create that finds a staging of the same request at work joins it instead of
 * staging a second copy. The caller says how long it waits ({@code patience}); past that it is told
 * the run is STAGING, and a later create answers the created run.
 *
 * <p>A staging goes on by itself after a fault: its stager waits a transient fault out ({@link
 * StagingAttempt}), and a staging whose stager is gone (no heartbeat for {@link #ABANDONED_AFTER}
 * and its node out of the cluster) is taken over by the first node that looks ({@link
 * #resumeInterrupted}, or a create of the same request) and goes on from its last committed step.
 * One that cannot go on (an upload cut off before it was answered) is marked FAILED, saying so.
 *
 * <p>Reads in order: look at the staging row, then the run → join a staging at work, or take an
 * interrupted one over and join it, or claim the run → stage the scope (StagingAttempt) → answer.
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

  /**
   * Whether a staging row's stager may still be at work, though its heartbeat is old (the database
   * was away): its node is a reachable member of the cluster, or it is this node's and this node
   * runs its holder ({@link #runs}). A stager gone otherwise is taken over.
   */
  interface Stagers {
    boolean atWork(StagingTable.Row row);
  }

  /** Who this node is in a staging row: its address, and its member's unique id in the cluster. */
  record Node(String address, String incarnation) {}

  private final RunItemStore store;
  private final StagingTable table;
  private final ScopeReader scopes;
  private final Coordinator coordinator;
  private final Executor staging;
  private final ScheduledExecutorService timers;
  private final String node;
  private final String incarnation;
  private final Stagers stagers;
  private final StagingAttempt.Deps attemptDeps;
  private final Set<String> holders = ConcurrentHashMap.newKeySet();
  // the node's clock: deadlines are the coordinator's, which goes by it
  private final Clock clock;

  RunStaging(
      RunItemStore store,
      StagingTable table,
      ScopeReader scopes,
      Coordinator coordinator,
      Executor staging,
      ScheduledExecutorService timers,
      Node node,
      Stagers stagers,
      ItemShards shards,
      int stepRows,
      Clock clock) {
    this.store = store;
    this.clock = clock;
    this.table = table;
    this.scopes = scopes;
    this.coordinator = coordinator;
    this.staging = staging;
    this.timers = timers;
    this.node = node.address();
    this.incarnation = node.incarnation();
    this.stagers = stagers;
    this.attemptDeps =
        new StagingAttempt.Deps(
            store, table, scopes, coordinator, shards, timers, staging, clock, stepRows);
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
   * second copy of a run that exists was staged (RunStagingContract).
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
    return CompletableFuture.supplyAsync(() -> readDigestOnly(request, upload), staging)
        .thenCompose(summary -> coordinator.create(request, null, summary))
        .thenApply(CreateOutcome.Answered::new);
  }

  private CompletionStage<CreateOutcome> stageOrJoin(
      RunRequest request, InputStream upload, Optional<StagingTable.Row> row, Duration patience) {
    String digest = StagingRows.requestDigest(request);
    if (row.isPresent() && StagingTable.STAGING.equals(row.get().state())) {
      StagingTable.Row staged = row.get();
      boolean atWork = isAtWork(staged);
      if (atWork && !staged.requestDigest().equals(digest)) {
        return CompletableFuture.completedFuture(
            new CreateOutcome.Answered(
                new RunCoordinator.Conflict(
                    "run "
                        + request.runId()
                        + " is being staged with different parameters: "
                        + String.join(", ", StagingRows.differences(staged, request)),
                    StagingRows.view(staged))));
      }
      if (atWork) {
        return join(request, upload, patience);
      }
      if (staged.requestDigest().equals(digest) && canGoOn(staged)) {
        // cut off by a fault: it goes on from its last step (here, if this node can read it),
        // and this create waits for it as a joiner does
        return CompletableFuture.runAsync(
                () -> recover(staged, "a create of the same run found it interrupted"), staging)
            .thenCompose(taken -> join(request, upload, patience));
      }
    }
    StagingTable.Claim claim =
        new StagingTable.Claim(
            request.runId(),
            newScopeId(),
            UUID.randomUUID().toString(),
            digest,
            request,
            StagingRows.requestJson(request),
            StagingRows.kind(request),
            node,
            incarnation);
    return CompletableFuture.supplyAsync(
            () -> row.isEmpty() ? table.insert(claim) : table.startOver(row.get(), claim), staging)
        .thenCompose(
            claimed -> {
              if (!claimed) {
                // another node claimed it between our read and our write: look again
                return look(request, upload, patience);
              }
              if (row.isPresent()) {
                String abandoned = row.get().scopeId();
                log.warn(
                    "run {}: starting over a staging that failed or cannot go on (scope {},"
                        + " node {})",
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
    boolean waitFor =
        row.isPresent()
            && StagingTable.STAGING.equals(row.get().state())
            && (isAtWork(row.get()) || canGoOn(row.get()));
    if (!waitFor) {
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
    if (!isAtWork(row.get())) {
      // cut off and not taken over yet: this node may go on with it
      CompletableFuture.runAsync(
              () -> recover(row.get(), "a create of the same run waits for it"), staging)
          .exceptionally(
              failure -> {
                log.debug("run {}: could not take the staging over: {}", request.runId(), failure);
                return null;
              });
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
    Instant started = clock.instant();
    StagingAttempt attempt =
        new StagingAttempt(attemptDeps, claim, request, upload, StagingAttempt.Start.NEW);
    Patience told = new Patience();
    CompletableFuture<RunCoordinator.CreateReply> done = runInBackground(attempt, told::close);
    // an upload's client is still sending until the body is read and staged: its patience starts
    // after that, and a failed read answers with its failure, never STAGING
    CompletableFuture<Boolean> patienceStarts =
        upload == null ? CompletableFuture.completedFuture(true) : attempt.bodyRead();
    CompletableFuture<CreateOutcome> outcome = new CompletableFuture<>();
    done.whenComplete(
        (reply, failure) -> {
          if (failure == null) {
            outcome.complete(new CreateOutcome.Answered(reply));
          } else if (upload == null && StagingRows.unwrap(failure) instanceof StagingLost) {
            // another node goes on with it: this create waits for that one as a joiner does
            completeWith(outcome, look(request, null, Duration.ZERO));
          } else {
            outcome.completeExceptionally(failure);
          }
        });
    patienceStarts.thenAccept(
        start -> {
          if (!start) {
            return;
          }
          timers.schedule(
              () -> {
                if (told.announce()) {
                  outcome.complete(
                      new CreateOutcome.StillStaging(
                          StagingRows.stagingView(request, started, attempt.staged())));
                }
              },
              patience.toNanos(),
              TimeUnit.NANOSECONDS);
        });
    return outcome;
  }

  /**
   * Runs an attempt on a staging thread, then {@link StagingAttempt#end}s it; completes with the
   * coordinator's answer, or the failure, once the rows and the staging row are as it leaves them.
   * {@code shown}, asked once the attempt has its outcome, says whether nobody waits for the answer
   * any more (the failure's reason then stays in the staging row).
   */
  private CompletableFuture<RunCoordinator.CreateReply> runInBackground(
      StagingAttempt attempt, java.util.function.BooleanSupplier shown) {
    holders.add(attempt.claim().holder());
    return CompletableFuture.supplyAsync(
        () -> {
          RunCoordinator.CreateReply reply = null;
          Throwable failure = null;
          try {
            reply = attempt.run();
          } catch (RuntimeException | Error e) {
            failure = e;
          }
          try {
            attempt.end(reply, failure, shown.getAsBoolean());
          } catch (RuntimeException e) {
            log.warn(
                "run {}: staging ended but its rows could not be tidied: {}",
                attempt.claim().runId(),
                e.toString());
          } finally {
            holders.remove(attempt.claim().holder());
          }
          if (failure != null) {
            throw failure instanceof RuntimeException r ? r : new CompletionException(failure);
          }
          return reply;
        },
        staging);
  }

  /**
   * Every stagings' row whose stager is gone (no heartbeat for {@link #ABANDONED_AFTER}, and its
   * node has left the cluster, or it is this node's and this node no longer runs it) is taken over
   * by this node: to go on from its last committed step when this node can read its scope, or to be
   * marked FAILED with the reason when it cannot go on (an upload cut off before it was answered, a
   * deadline passed). Each node looks every few seconds; of two that take the same row over, one
   * wins. Blocks.
   */
  void resumeInterrupted() {
    for (StagingTable.Row row : table.all()) {
      if (StagingTable.STAGING.equals(row.state()) && !isAtWork(row)) {
        recover(row, "its stager is gone");
      }
    }
  }

  /** Takes an interrupted staging over, unless another node can go on with it and this one not. */
  private void recover(StagingTable.Row row, String why) {
    Optional<RunRequest> request = StagingRows.request(row);
    Optional<String> cannotGoOn = StagingRows.whyItCannotGoOn(row, request, clock.instant());
    if (cannotGoOn.isEmpty() && !canStageHere(row, request.get())) {
      return; // another node, one whose scope directory has the file, will
    }
    String holder = UUID.randomUUID().toString();
    if (!table.takeOver(row, holder, node, incarnation)) {
      return; // another node was first, or the stager was alive after all
    }
    StagingTable.Claim claim =
        new StagingTable.Claim(
            row.runId(),
            row.scopeId(),
            holder,
            row.requestDigest(),
            request.orElse(null),
            row.request(),
            row.scopeKind(),
            node,
            incarnation);
    if (cannotGoOn.isPresent()) {
      log.warn("run {}: staging interrupted ({}): {}", row.runId(), why, cannotGoOn.get());
      store.discard(row.scopeId());
      table.markFailed(claim, cannotGoOn.get());
      return;
    }
    log.warn(
        "run {}: staging interrupted ({}, node {}): going on from row {} here",
        row.runId(),
        why,
        row.node(),
        row.resumeRows());
    StagingAttempt attempt =
        new StagingAttempt(
            attemptDeps, claim, request.get(), null, StagingAttempt.Start.resuming(row));
    runInBackground(attempt, () -> true)
        .whenComplete(
            (reply, failure) -> {
              if (failure != null && !(StagingRows.unwrap(failure) instanceof StagingLost)) {
                log.warn("run {}: the resumed staging failed: {}", row.runId(), reason(failure));
              }
            });
  }

  /** A STAGING row whose stager heartbeats, or is known to be at work though it cannot. */
  private boolean isAtWork(StagingTable.Row row) {
    return StagingRows.isLive(row) || stagers.atWork(row);
  }

  /** An interrupted staging that a stager can go on with (on some node). */
  private boolean canGoOn(StagingTable.Row row) {
    return StagingRows.whyItCannotGoOn(row, StagingRows.request(row), clock.instant()).isEmpty();
  }

  private boolean canStageHere(StagingTable.Row row, RunRequest request) {
    return row.scopeCount() != null || scopes.canRead(request.scope());
  }

  /** Whether this node runs the stager {@code holder}. */
  boolean runs(String holder) {
    return holder != null && holders.contains(holder);
  }

  /**
   * A create's patience: it either runs out first (the client is told STAGING, and a failure's
   * reason must then stay in the staging row) or the attempt has its outcome first (the client is
   * told that). Whichever comes first decides.
   */
  private static final class Patience {
    private boolean announced;
    private boolean closed;

    /** The patience ran out: true when the client is to be told STAGING. */
    synchronized boolean announce() {
      if (closed) {
        return false;
      }
      announced = true;
      return true;
    }

    /** The attempt has its outcome: whether the client was told STAGING before. */
    synchronized boolean close() {
      closed = true;
      return announced;
    }
  }

  private ScopeSummary readDigestOnly(RunRequest request, InputStream upload) {
    return upload != null
        ? scopes.readUpload(upload, ScopeSink.digestOnly())
        : scopes.read(request.scope(), ScopeSink.digestOnly());
  }

  private <T> CompletionStage<T> later(java.util.function.Supplier<CompletionStage<T>> next) {
    CompletableFuture<T> result = new CompletableFuture<>();
    timers.schedule(
        () -> completeWith(result, next.get()), JOIN_POLL.toMillis(), TimeUnit.MILLISECONDS);
    return result;
  }

  private static <T> void completeWith(CompletableFuture<T> target, CompletionStage<T> source) {
    source.whenComplete(
        (value, failure) -> {
          if (failure != null) {
            target.completeExceptionally(failure);
          } else {
            target.complete(value);
          }
        });
  }

  /**
   * A new scope's id: 80 random bits in base 36, at most 16 characters. Every row of the scope and
   * every entry of run_item's three indexes carry it: a UUID's 36 characters made a million-row
   * scope a third larger (484 against 317 MB) and its staging's WAL a quarter larger.
   */
  static String newScopeId() {
    return new BigInteger(80, SCOPE_IDS).toString(36);
  }

  private static final SecureRandom SCOPE_IDS = new SecureRandom();

  /** Every row is staged with its item's shard: each node pages the shards it hosts. */
  static ToIntFunction<AccountCursor> shardOf(ItemShards shards, RunRequest request) {
    return account ->
        shards.shardNumber(
            ItemId.of(
                request.job(), request.businessDate(), account.accountId(), account.cursor()));
  }

  static String reason(Throwable failure) {
    Throwable cause = StagingRows.unwrap(failure);
    return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
  }
}

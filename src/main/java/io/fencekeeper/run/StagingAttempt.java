package io.fencekeeper.run;

import io.fencekeeper.item.ItemShards;
import io.fencekeeper.run.scope.ScopeChanged;
import io.fencekeeper.run.scope.ScopeException;
import io.fencekeeper.run.scope.ScopeReader;
import io.fencekeeper.run.scope.ScopeSink;
import io.fencekeeper.run.scope.ScopeSummary;
import java.io.InputStream;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One stager's staging of one run, from its claim to the coordinator's answer, on a staging thread
 * of its own. Reads in the order things happen: read the scope into {@code run_item} in committed
 * steps ({@link StagedScope}) → record its count and digest (from here on the run can be created
 * from the rows alone, and an upload is answered) → refresh the planner's statistics → hand the run
 * to the coordinator → {@link #end} clears the staging row, or discards the rows and says why.
 *
 * <p>A transient fault is waited out and the step tried again ({@link StagingRetry}): a step's rows
 * are written again from the rows it holds, so an upload rides out a database outage while its
 * client waits; a fault of the scope's own source (a SQL scope's database) reads the scope again
 * from the first row and stages only what follows the last committed step. Another node taking the
 * staging over ends this one quietly ({@link StagingLost}): the rows are the other's.
 */
final class StagingAttempt {

  private static final Logger log = LoggerFactory.getLogger(StagingAttempt.class);

  /** How long one question to the coordinator may take before it is asked again. */
  static final Duration ASK_WAIT = Duration.ofSeconds(30);

  /** How far past its run's deadline a staging that failed still tries to leave things tidy. */
  private static final Duration TIDY_UP_FOR = Duration.ofMinutes(5);

  /**
   * What every attempt of a node shares; {@code threads} runs the step writers and heartbeats, a
   * pool of its own that grows with the stagings (a thread may wait for the database).
   */
  record Deps(
      RunItemStore store,
      StagingTable table,
      ScopeReader scopes,
      RunStaging.Coordinator coordinator,
      ItemShards shards,
      ScheduledExecutorService timers,
      Executor threads,
      Clock clock,
      int stepRows) {}

  /**
   * Where the attempt starts: a new scope ({@link #NEW}), or one that a fault cut off, going on
   * after {@code after}, or, when its reading was complete ({@code summary} known), from the
   * coordinator on.
   */
  record Start(ScopeSink.ReadSoFar after, ScopeSummary summary, boolean resumed) {
    static final Start NEW = new Start(ScopeSink.ReadSoFar.NOTHING, null, false);

    static Start resuming(StagingTable.Row row) {
      ScopeSummary summary =
          row.scopeCount() == null ? null : new ScopeSummary(row.scopeCount(), row.scopeDigest());
      return new Start(row.resumePoint(), summary, true);
    }
  }

  private final Deps deps;
  private final StagingTable.Claim claim;
  private final RunRequest request;
  private final InputStream upload;
  private final Start start;
  private final StagingRetry retry;
  private final CompletableFuture<Boolean> bodyRead = new CompletableFuture<>();
  private final AtomicBoolean beating = new AtomicBoolean();
  private final RecentRate rate = new RecentRate();
  private volatile boolean lost;
  private volatile StagedScope scope;
  private volatile String lastFault;
  private volatile boolean asked;

  StagingAttempt(
      Deps deps, StagingTable.Claim claim, RunRequest request, InputStream upload, Start start) {
    this.deps = deps;
    this.claim = claim;
    this.request = request;
    this.upload = upload;
    this.start = start;
    this.retry = new StagingRetry(request.deadline(), deps.clock(), this::noteFault);
  }

  StagingTable.Claim claim() {
    return claim;
  }

  /**
   * Completes once the scope is read: true when it is staged in full and its summary recorded (an
   * upload is durable from then on and may be answered), false when the read failed.
   */
  CompletableFuture<Boolean> bodyRead() {
    return bodyRead;
  }

  /** Rows staged so far, by this attempt and those before it. */
  long staged() {
    StagedScope current = scope;
    return current != null ? current.staged() : start.after().accounts();
  }

  /** Stages the scope and asks the coordinator; blocks. */
  RunCoordinator.CreateReply run() {
    ScheduledFuture<?> heartbeat =
        deps.timers()
            .scheduleAtFixedRate(
                // on a staging thread: a beat that waits for the database holds no timer up
                () -> deps.threads().execute(this::beat),
                RunStaging.HEARTBEAT.toMillis(),
                RunStaging.HEARTBEAT.toMillis(),
                TimeUnit.MILLISECONDS);
    try {
      long began = System.nanoTime();
      ScopeSummary summary = start.summary() != null ? start.summary() : read();
      if (start.summary() == null) {
        retry.call("record the scope's summary", () -> recordSummary(summary));
      }
      bodyRead.complete(true);
      long read = System.nanoTime();
      retry.call("refresh the planner's statistics", this::refreshStatistics);
      long analyzed = System.nanoTime();
      asked = true;
      RunCoordinator.CreateReply reply =
          retry.call("hand the run to the coordinator", () -> ask(summary));
      long asked = System.nanoTime();
      log.info(
          "run {}: {} rows staged in {} s (read and written {} s, statistics {} s, coordinator {}"
              + " s)",
          claim.runId(),
          summary.count(),
          seconds(asked - began),
          seconds(read - began),
          seconds(analyzed - read),
          seconds(asked - analyzed));
      return reply;
    } finally {
      heartbeat.cancel(false);
      bodyRead.complete(false);
    }
  }

  /**
   * After {@link #run}: a run created from this scope keeps its rows and the staging row goes;
   * otherwise the rows are discarded, and the staging row goes too, or, when nobody waits for the
   * answer ({@code shown}: the client was told STAGING, or this attempt went on after a fault),
   * stays FAILED with the reason. A lost claim touches nothing.
   */
  void end(RunCoordinator.CreateReply reply, Throwable failure, boolean shown) {
    if (unwrap(failure) instanceof StagingLost) {
      log.info("run {}: another node took the staging over", claim.runId());
      return;
    }
    StagingRetry tidy =
        new StagingRetry(
            later(request.deadline(), deps.clock().instant().plus(TIDY_UP_FOR)),
            deps.clock(),
            fault -> log.warn("run {}: {}", claim.runId(), fault));
    if (failure != null && asked) {
      // the coordinator was asked and no answer came: it may have created the run from these
      // rows, which then must stay
      Optional<RunView> known =
          tidy.call(
              "look the run up",
              () ->
                  deps.coordinator()
                      .get(claim.runId())
                      .toCompletableFuture()
                      .get(ASK_WAIT.toMillis(), TimeUnit.MILLISECONDS));
      if (known.isPresent() && claim.scopeId().equals(known.get().scopeId())) {
        tidy.call(
            "clear the staging row",
            () -> {
              deps.table().remove(claim);
              return null;
            });
        return;
      }
    }
    if (!createdFromThisScope(reply)) {
      tidy.call("discard the staged rows", () -> dropFrom(0));
    }
    if (failure != null && shown) {
      tidy.call(
          "record why staging failed",
          () -> {
            deps.table().markFailed(claim, RunStaging.reason(failure));
            return null;
          });
    } else {
      tidy.call(
          "clear the staging row",
          () -> {
            deps.table().remove(claim);
            return null;
          });
    }
  }

  /**
   * Reads the scope into {@code run_item}. A fault of the scope's source is waited out and the
   * scope read again, going on after the last committed step; a scope found changed up to there is
   * staged again from the first row.
   */
  private ScopeSummary read() {
    ScopeSink.ReadSoFar after = start.after();
    boolean faulted = start.resumed();
    if (start.resumed()) {
      dropPast(after);
    }
    for (int faults = 1; ; faults++) {
      StagedScope staging =
          new StagedScope(
              deps.store(),
              deps.table(),
              claim,
              RunStaging.shardOf(deps.shards(), request),
              retry,
              () -> lost,
              after,
              deps.threads(),
              deps.stepRows());
      scope = staging;
      try {
        return upload != null
            ? deps.scopes().readUpload(upload, staging)
            : deps.scopes().read(request.scope(), staging, after);
      } catch (ScopeChanged changed) {
        staging.abandon();
        log.warn("run {}: {}", claim.runId(), changed.getMessage());
        after = ScopeSink.ReadSoFar.NOTHING;
        dropPast(after);
      } catch (RuntimeException e) {
        staging.abandon();
        // a source that cannot be read at the first contact is answered as before (a wrong
        // query, a source that is not there); an upload's body cannot be read again
        boolean firstContact = !faulted && staging.staged() == 0 && e instanceof ScopeException;
        if (upload != null || firstContact || !StagingRetry.isTransient(e)) {
          throw e;
        }
        faulted = true;
        retry.pause("read the scope", e, faults);
        after = retry.call("look up the last committed step", this::resumePoint);
        dropPast(after);
      }
    }
  }

  /** Where this claim goes on from: the last clean step its row records. */
  private ScopeSink.ReadSoFar resumePoint() {
    return deps.table()
        .find(claim.runId())
        .filter(row -> claim.holder().equals(row.holder()))
        .map(StagingTable.Row::resumePoint)
        .orElseThrow(() -> new StagingLost(claim.runId()));
  }

  /** Drops the rows past {@code after}: a step begun but not trusted (or the whole scope). */
  private void dropPast(ScopeSink.ReadSoFar after) {
    int from = Math.toIntExact(after.accounts());
    retry.call("drop the rows past the last step", () -> dropFrom(from));
  }

  /** Deletes the scope's rows from {@code seq} on, while the row is this claim's. */
  private Void dropFrom(int seq) throws Exception {
    try (Connection c = deps.store().stagingConnection()) {
      if (!deps.table().lockHeld(c, claim)) {
        c.rollback();
        throw new StagingLost(claim.runId());
      }
      int deleted = deps.store().deleteFrom(c, claim.scopeId(), seq);
      c.commit();
      if (deleted > 0) {
        log.info("run {}: dropped {} staged rows from seq {}", claim.runId(), deleted, seq);
      }
      return null;
    }
  }

  private Void recordSummary(ScopeSummary summary) {
    if (!deps.table().recordSummary(claim, summary.count(), summary.digest())) {
      throw new StagingLost(claim.runId());
    }
    return null;
  }

  private Void refreshStatistics() {
    deps.store().refreshStatistics();
    return null;
  }

  /** Only the claim's holder asks the coordinator with its scope: confirmed just before. */
  private RunCoordinator.CreateReply ask(ScopeSummary summary) throws Exception {
    if (!deps.table().heartbeat(claim, summary.count(), 0)) {
      throw new StagingLost(claim.runId());
    }
    try {
      return deps.coordinator()
          .create(request, claim.scopeId(), summary)
          .toCompletableFuture()
          .get(ASK_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
  }

  /** A create answered with a run of this very scope: a retried ask, or one before a takeover. */
  private boolean createdFromThisScope(RunCoordinator.CreateReply reply) {
    if (reply instanceof RunCoordinator.Created) {
      return true;
    }
    return reply instanceof RunCoordinator.AlreadyExists existing
        && claim.scopeId().equals(existing.run().scopeId());
  }

  /** Every second: the row shows the rows staged and the recent rate, and says it is alive. */
  private void beat() {
    if (!beating.compareAndSet(false, true)) {
      return; // the last beat still waits for the database
    }
    try {
      long rows = staged();
      double perSecond = rate.sample(System.nanoTime(), rows);
      if (!lost && !deps.table().heartbeat(claim, rows, perSecond)) {
        lost = true;
      }
    } catch (RuntimeException e) {
      log.debug("run {}: staging heartbeat failed: {}", claim.runId(), e.toString());
    } finally {
      beating.set(false);
    }
  }

  /** A fault waited out: logged once per kind, and shown with the run while it lasts. */
  private void noteFault(String fault) {
    if (!fault.equals(lastFault)) {
      log.warn("run {}: {}", claim.runId(), fault);
      lastFault = fault;
    }
    try {
      deps.table().noteFault(claim, fault);
    } catch (RuntimeException e) {
      // the database that faulted may not take the note either: the heartbeat's age tells
    }
  }

  private static String seconds(long nanos) {
    return String.format(java.util.Locale.ROOT, "%.2f", nanos / 1e9);
  }

  private static Instant later(Instant a, Instant b) {
    return a.isAfter(b) ? a : b;
  }

  private static Throwable unwrap(Throwable failure) {
    Throwable t = failure;
    while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** Rows per second over the last five seconds of samples. */
  static final class RecentRate {
    private static final long WINDOW = Duration.ofSeconds(5).toNanos();
    private final ArrayDeque<long[]> samples = new ArrayDeque<>();

    synchronized double sample(long nanos, long rows) {
      samples.addLast(new long[] {nanos, rows});
      while (samples.size() > 2 && nanos - samples.peekFirst()[0] > WINDOW) {
        samples.removeFirst();
      }
      long[] first = samples.peekFirst();
      long elapsed = nanos - first[0];
      return elapsed <= 0 ? 0 : Math.max(0, rows - first[1]) * 1e9 / elapsed;
    }
  }
}

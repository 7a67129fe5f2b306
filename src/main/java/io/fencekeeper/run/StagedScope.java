package io.fencekeeper.run;

import io.fencekeeper.run.RunItemStore.NewRow;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.ScopeSink;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.ToIntFunction;
import org.postgresql.copy.CopyIn;

/**
 * A scope being staged in {@code run_item} under one scope id, in steps of {@link #STEP_ROWS} rows.
 * A step is one short transaction, written once the reader has filled it: its rows (one COPY on
 * PostgreSQL, batched INSERTs on H2) and, in {@code run_staging}, how far the staging has come with
 * it ({@link StagingTable#recordStep}), committed only while the claim is still this stager's. A
 * writer thread writes one step while the reader fills the next, so reading and the database work
 * side by side, and at most two steps are held.
 *
 * <p>So a fault costs the step in progress, never what was committed: a transient fault (the
 * database gone for a while) is waited out and the step written again from the rows it holds
 * ({@link StagingRetry}), the reader waiting meanwhile (an upload's client with it); a step whose
 * commit was cut off is looked up first and not written twice. A stager that takes over after this
 * one's node died goes on from the last committed step.
 *
 * <p>The table's unique index finds repeated accounts, so staging holds no account beyond its two
 * steps. On PostgreSQL a repeat fails the step's COPY; the step is then written row by row, which
 * names the repeats (a scope with a repeat is refused anyway). Repeats are answered once their step
 * is committed, a step later than the batch that held them.
 */
final class StagedScope implements ScopeSink {

  /** Rows per step: 20,000 narrow rows are about 2 MB of heap and a few hundred ms of COPY. */
  static final int STEP_ROWS = 20_000;

  private final RunItemStore store;
  private final StagingTable table;
  private final StagingTable.Claim claim;
  private final ToIntFunction<AccountCursor> shardOf;
  private final StagingRetry retry;
  private final BooleanSupplier lost;
  private final Executor writer;
  private final int stepRows;

  // the reader's side
  private List<NewRow> filling;
  private int nextSeq;
  private CompletableFuture<Void> writing = CompletableFuture.completedFuture(null);

  // both sides
  private final ConcurrentLinkedQueue<Positioned> repeats = new ConcurrentLinkedQueue<>();
  private final AtomicLong staged = new AtomicLong();
  private volatile boolean repeatsFound;

  // the writer's side, one step at a time
  private long committedRows;

  /**
   * @param after what earlier stagers of the claim's scope committed and this one goes on from
   *     ({@link ScopeSink.ReadSoFar#NOTHING} for a new scope)
   * @param lost whether another node took the staging over (the heartbeat's finding)
   * @param writer where steps are written, beside the reader
   */
  StagedScope(
      RunItemStore store,
      StagingTable table,
      StagingTable.Claim claim,
      ToIntFunction<AccountCursor> shardOf,
      StagingRetry retry,
      BooleanSupplier lost,
      ReadSoFar after,
      Executor writer,
      int stepRows) {
    this.store = store;
    this.table = table;
    this.claim = claim;
    this.shardOf = shardOf;
    this.retry = retry;
    this.lost = lost;
    this.writer = writer;
    this.stepRows = stepRows;
    this.filling = new ArrayList<>(Math.min(stepRows, 1024));
    // a clean part has no repeats: its seqs are 0 .. accounts - 1
    this.nextSeq = Math.toIntExact(after.accounts());
    this.committedRows = after.accounts();
    this.staged.set(after.accounts());
  }

  /** Rows handed to the database, repeats not; read by other threads for progress. */
  long staged() {
    return staged.get();
  }

  @Override
  public List<Positioned> stage(List<Positioned> batch, ReadSoFar soFar) {
    if (lost.getAsBoolean()) {
      throw new StagingLost(claim.runId());
    }
    for (Positioned p : batch) {
      filling.add(
          new NewRow(nextSeq++, p.position(), p.account(), shardOf.applyAsInt(p.account())));
    }
    staged.addAndGet(batch.size());
    if (filling.size() >= stepRows) {
      handOn(soFar);
    } else if (writing.isDone()) {
      awaitWriting(); // a failure of the last step stops the reader now, not a step later
    }
    return answerRepeats();
  }

  @Override
  public List<Positioned> finish(ReadSoFar soFar) {
    if (!filling.isEmpty()) {
      handOn(soFar);
    }
    awaitWriting();
    return answerRepeats();
  }

  @Override
  public long firstPositionOf(AccountCursor account) {
    // a repeat is answered once its step is committed: the first occurrence is in the table
    return store.sourcePosition(claim.scopeId(), account);
  }

  /**
   * The read ended without finishing (a bad scope, a fault of its source): waits until the step
   * being written is written or failed, so that nothing of this reader is written after it.
   */
  void abandon() {
    writing.exceptionally(failure -> null).join();
  }

  /** The step is full: waits for the one being written, then has the writer write this one. */
  private void handOn(ReadSoFar soFar) {
    awaitWriting();
    List<NewRow> step = filling;
    filling = new ArrayList<>(Math.min(stepRows, 1024));
    int endSeq = nextSeq;
    writing = CompletableFuture.runAsync(() -> write(step, endSeq, soFar), writer);
  }

  private void awaitWriting() {
    try {
      writing.join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException cause ? cause : e;
    }
  }

  /** Writes one step, again after each transient fault, once. On the writer. */
  private void write(List<NewRow> step, int endSeq, ReadSoFar soFar) {
    boolean[] tried = {false};
    retry.call(
        "commit a step of the scope",
        () -> {
          List<NewRow> found;
          if (tried[0] && committedAlready(endSeq)) {
            found = missingFrom(step); // its commit got in; its repeats are the rows left out
          } else {
            tried[0] = true;
            found = writeInOneTransaction(step, endSeq, soFar);
          }
          committedRows += step.size() - found.size();
          report(found);
          return null;
        });
  }

  private List<NewRow> writeInOneTransaction(List<NewRow> step, int endSeq, ReadSoFar soFar)
      throws SQLException {
    try (Connection c = store.stagingConnection()) {
      List<NewRow> found = store.isPostgres() ? copyOrInsert(c, step) : batchOrInsert(c, step);
      boolean clean = soFar.clean() && !repeatsFound && found.isEmpty();
      long rows = committedRows + step.size() - found.size();
      if (!table.recordStep(c, claim, endSeq, rows, clean ? soFar : null)) {
        c.rollback();
        throw new StagingLost(claim.runId());
      }
      c.commit();
      return found;
    }
  }

  /** One plain batch of the step (H2); a repeat fails it, and the step goes in row by row. */
  private List<NewRow> batchOrInsert(Connection c, List<NewRow> step) throws SQLException {
    try {
      store.insertAll(c, claim.scopeId(), step);
      return List.of();
    } catch (SQLException e) {
      if (!uniqueViolation(e)) {
        throw e;
      }
      c.rollback();
      return store.insertNew(c, claim.scopeId(), step);
    }
  }

  /** A batch's failure names the row's in its chain (H2 wraps it in a BatchUpdateException). */
  private static boolean uniqueViolation(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      for (SQLException s = t instanceof SQLException q ? q : null;
          s != null;
          s = s.getNextException()) {
        if ("23505".equals(s.getSQLState())) {
          return true;
        }
      }
    }
    return false;
  }

  /** One COPY of the step; a repeat fails it, and the step goes in row by row instead. */
  private List<NewRow> copyOrInsert(Connection c, List<NewRow> step) throws SQLException {
    CopyIn copy = store.startCopy(c);
    try {
      byte[] text = RunItemStore.copyText(claim.scopeId(), step);
      copy.writeToCopy(text, 0, text.length);
      copy.endCopy();
      return List.of();
    } catch (SQLException e) {
      if (!"23505".equals(e.getSQLState())) {
        throw e;
      }
      if (copy.isActive()) {
        try {
          copy.cancelCopy();
        } catch (SQLException ended) {
          // the server ended the COPY itself when it met the repeat
        }
      }
      c.rollback();
      return store.insertNew(c, claim.scopeId(), step);
    }
  }

  /** Whether the step whose commit a fault cut off got in. */
  private boolean committedAlready(int endSeq) {
    Optional<Integer> next = table.nextSeq(claim);
    if (next.isEmpty()) {
      throw new StagingLost(claim.runId());
    }
    return next.get() >= endSeq;
  }

  private List<NewRow> missingFrom(List<NewRow> step) {
    Set<Integer> in =
        store.seqsIn(claim.scopeId(), step.get(0).seq(), step.get(step.size() - 1).seq() + 1);
    return step.stream().filter(row -> !in.contains(row.seq())).toList();
  }

  private void report(List<NewRow> found) {
    if (found.isEmpty()) {
      return;
    }
    repeatsFound = true;
    staged.addAndGet(-found.size());
    found.forEach(row -> repeats.add(new Positioned(row.position(), row.account())));
  }

  private List<Positioned> answerRepeats() {
    List<Positioned> answer = new ArrayList<>();
    for (Positioned p = repeats.poll(); p != null; p = repeats.poll()) {
      answer.add(p);
    }
    return answer;
  }
}

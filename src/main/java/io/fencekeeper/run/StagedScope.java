package io.fencekeeper.run;

import io.fencekeeper.run.RunItemStore.NewRow;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.ScopeSink;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.ToIntFunction;
import org.postgresql.copy.CopyIn;

/**
 * A scope being staged in {@code run_item} under one scope id, in steps of {@link #STEP_ROWS} rows.
 * A step is one transaction: its rows (streamed by COPY on PostgreSQL as they are read, inserted
 * batch by batch on H2) and, in {@code run_staging}, how far the staging has come with it ({@link
 * StagingTable#recordStep}), committed only while the claim is still this stager's.
 *
 * <p>So a fault costs the step in progress, never what was committed: a transient fault (the
 * database gone for a while) is waited out and the step written again from the rows it holds
 * ({@link StagingRetry}); a step whose commit was cut off is looked up first and not written twice.
 * A stager that takes over after this one's node died goes on from the last committed step.
 *
 * <p>The table's unique index finds repeated accounts, so staging holds one step at a time. On
 * PostgreSQL a repeat fails the step's COPY; the step is then written again row by row, which names
 * the repeats (a scope with a repeat is refused anyway).
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
  private final int stepRows;

  private final List<NewRow> step = new ArrayList<>();
  private final List<Positioned> repeats = new ArrayList<>();
  private final AtomicLong staged = new AtomicLong();
  private int nextSeq;
  private int committedSeq;
  private boolean repeatsFound;

  // the step's transaction
  private Connection connection;
  private CopyIn copy;
  private int written;
  private boolean copyRefused;

  /**
   * @param after what earlier stagers of the claim's scope committed and this one goes on from
   *     ({@link ScopeSink.ReadSoFar#NOTHING} for a new scope)
   * @param lost whether another node took the staging over (the heartbeat's finding)
   */
  StagedScope(
      RunItemStore store,
      StagingTable table,
      StagingTable.Claim claim,
      ToIntFunction<AccountCursor> shardOf,
      StagingRetry retry,
      BooleanSupplier lost,
      ReadSoFar after,
      int stepRows) {
    this.store = store;
    this.table = table;
    this.claim = claim;
    this.shardOf = shardOf;
    this.retry = retry;
    this.lost = lost;
    this.stepRows = stepRows;
    // a clean part has no repeats: its seqs are 0 .. accounts - 1
    this.nextSeq = Math.toIntExact(after.accounts());
    this.committedSeq = nextSeq;
    this.staged.set(after.accounts());
  }

  /** Rows in {@code run_item} or in the step being written; read by other threads for progress. */
  long staged() {
    return staged.get();
  }

  @Override
  public List<Positioned> stage(List<Positioned> batch, ReadSoFar soFar) {
    if (lost.getAsBoolean()) {
      throw new StagingLost(claim.runId());
    }
    for (Positioned p : batch) {
      step.add(new NewRow(nextSeq++, p.position(), p.account(), shardOf.applyAsInt(p.account())));
    }
    staged.addAndGet(batch.size());
    retry.call("stage the scope's rows", this::write);
    if (step.size() >= stepRows) {
      commit(soFar);
    }
    return answerRepeats();
  }

  @Override
  public List<Positioned> finish(ReadSoFar soFar) {
    if (!step.isEmpty()) {
      commit(soFar);
    }
    return answerRepeats();
  }

  /** The first occurrence may still be in the step, uncommitted: looked for there first. */
  @Override
  public long firstPositionOf(AccountCursor account) {
    for (NewRow row : step) {
      if (row.account().equals(account)) {
        return row.position();
      }
    }
    return store.sourcePosition(claim.scopeId(), account);
  }

  /** The read ended without finishing (a bad scope, the node stopping): the step rolls back. */
  void abandon() {
    closeStep();
  }

  /** Writes the step's rows not yet on its connection, opening the step if it is not open. */
  private Void write() throws SQLException {
    try {
      if (connection == null) {
        connection = store.stagingConnection();
        written = 0;
        copyRefused = false;
      }
      List<NewRow> unwritten = step.subList(written, step.size());
      if (!store.isPostgres()) {
        dropRepeats(store.insertNew(connection, claim.scopeId(), new ArrayList<>(unwritten)));
      } else if (!copyRefused && !unwritten.isEmpty()) {
        if (copy == null) {
          copy = store.startCopy(connection);
        }
        byte[] text = RunItemStore.copyText(claim.scopeId(), unwritten);
        try {
          copy.writeToCopy(text, 0, text.length);
        } catch (SQLException e) {
          if (!isRepeat(e)) {
            throw e;
          }
          refuseCopy();
        }
      }
      written = step.size();
      return null;
    } catch (SQLException | RuntimeException e) {
      closeStep();
      throw e;
    }
  }

  /** Commits the step with how far the read has come; a cut-off commit is looked up, not redone. */
  private void commit(ReadSoFar soFar) {
    retry.call(
        "commit a step of the scope",
        () -> {
          if (connection == null && committedAlready()) {
            committed();
            return null;
          }
          try {
            write();
            if (copy != null) {
              try {
                copy.endCopy();
                copy = null;
              } catch (SQLException e) {
                if (!isRepeat(e)) {
                  throw e;
                }
                refuseCopy();
              }
            }
            if (copyRefused) {
              // the step again, row by row: the repeats are named and left out
              dropRepeats(store.insertNew(connection, claim.scopeId(), new ArrayList<>(step)));
              copyRefused = false;
            }
            boolean clean = soFar.clean() && !repeatsFound;
            if (!table.recordStep(connection, claim, nextSeq, staged.get(), clean ? soFar : null)) {
              connection.rollback();
              throw new StagingLost(claim.runId());
            }
            connection.commit();
          } catch (SQLException | RuntimeException e) {
            closeStep();
            throw e;
          }
          committed();
          return null;
        });
  }

  /** Whether the step being committed when a fault cut the connection got in. */
  private boolean committedAlready() {
    Optional<Integer> next = table.nextSeq(claim);
    if (next.isEmpty()) {
      throw new StagingLost(claim.runId());
    }
    return next.get() > committedSeq;
  }

  private void committed() {
    committedSeq = nextSeq;
    step.clear();
    closeStep();
  }

  /** A repeat failed the COPY: the step is written row by row when it is committed. */
  private void refuseCopy() throws SQLException {
    copyRefused = true;
    if (copy != null && copy.isActive()) {
      try {
        copy.cancelCopy();
      } catch (SQLException e) {
        // the server ended the COPY itself when it met the repeat
      }
    }
    copy = null;
    connection.rollback();
  }

  private void dropRepeats(List<NewRow> found) {
    if (found.isEmpty()) {
      return;
    }
    repeatsFound = true;
    step.removeAll(found);
    staged.addAndGet(-found.size());
    found.forEach(row -> repeats.add(new Positioned(row.position(), row.account())));
  }

  private List<Positioned> answerRepeats() {
    if (repeats.isEmpty()) {
      return List.of();
    }
    List<Positioned> answer = List.copyOf(repeats);
    repeats.clear();
    return answer;
  }

  private void closeStep() {
    copy = null;
    written = 0;
    copyRefused = false;
    if (connection != null) {
      try {
        connection.close(); // the pool rolls back what was not committed
      } catch (SQLException e) {
        // a broken connection: the pool drops it
      }
      connection = null;
    }
  }

  private static boolean isRepeat(SQLException e) {
    return "23505".equals(e.getSQLState());
  }
}

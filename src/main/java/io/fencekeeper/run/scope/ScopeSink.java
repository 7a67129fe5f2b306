package io.fencekeeper.run.scope;

import java.util.List;

/**
 * Where a scope read puts its accounts, in order: the {@code run_item} table when a run is staged.
 * The sink also finds repeated accounts, so that duplicate detection costs the reader no memory:
 * the database's unique index on {@code run_item} does it for a staged scope.
 */
public interface ScopeSink {

  /** One account and where it came from (a line, row or index), for messages. */
  record Positioned(long position, AccountCursor account) {}

  /**
   * How far a read has come: the valid accounts read so far, the digest of exactly those accounts
   * in order (the scope digest's prefix), and whether every row so far obeyed the rules. A sink
   * that commits in steps records it with each step, so that a staging cut off by a fault goes on
   * from its last step instead of from the first row ({@link ScopeReader#read(Scope, ScopeSink,
   * ReadSoFar)}).
   */
  record ReadSoFar(long accounts, String digest, boolean clean) {

    /** Nothing read yet: a read from the first row. */
    public static final ReadSoFar NOTHING = new ReadSoFar(0, null, true);
  }

  /**
   * Stages a batch after everything staged before; {@code soFar} is the read with this batch.
   * Answers the accounts found since the last answer that repeat one staged earlier (in an earlier
   * batch or earlier in the same one); a repeat is not staged. A sink that writes in steps learns
   * of a repeat when its step is written, after the batch that held it.
   */
  List<Positioned> stage(List<Positioned> batch, ReadSoFar soFar);

  /**
   * The read is complete ({@code soFar} is all of it): stages what the sink still holds and answers
   * the repeats not answered yet.
   */
  default List<Positioned> finish(ReadSoFar soFar) {
    return List.of();
  }

  /** Where an account that was staged came from; asked only for reported repeats. */
  long firstPositionOf(AccountCursor account);

  /**
   * Stages nothing and finds no repeats: for a read that only needs the count and the digest of
   * accounts already known to be valid (a retry compared with the run it would create).
   */
  static ScopeSink digestOnly() {
    return new ScopeSink() {
      @Override
      public List<Positioned> stage(List<Positioned> batch, ReadSoFar soFar) {
        return List.of();
      }

      @Override
      public long firstPositionOf(AccountCursor account) {
        return -1;
      }
    };
  }
}

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
   * Stages a batch after everything staged before. Answers the positions, ascending, of the
   * accounts that repeat one staged earlier (in an earlier batch or earlier in this one); a repeat
   * is not staged.
   */
  List<Long> stage(List<Positioned> batch);

  /** Where an account that was staged came from; asked only for reported repeats. */
  long firstPositionOf(AccountCursor account);

  /**
   * Stages nothing and finds no repeats: for a read that only needs the count and the digest of
   * accounts already known to be valid (a retry compared with the run it would create).
   */
  static ScopeSink digestOnly() {
    return new ScopeSink() {
      @Override
      public List<Long> stage(List<Positioned> batch) {
        return List.of();
      }

      @Override
      public long firstPositionOf(AccountCursor account) {
        return -1;
      }
    };
  }
}

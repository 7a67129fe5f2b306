package io.fencekeeper.run.scope;

import io.fencekeeper.item.ItemId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeMap;

/**
 * One pass over a scope's accounts, whatever their source: validates each account, digests the
 * accounts in order and hands them to the sink in batches; the sink finds repeats. Problems are
 * collected, not thrown one by one, so the operator sees every bad row of a file at once.
 *
 * <p>A problem names where (line and column, row, or index) and the rule broken, never the value: a
 * scope may come from a file or database the caller cannot read otherwise, and an error message
 * must not become a way to read it. Memory is bounded: one batch and the first {@value
 * #REPORTED_PROBLEMS} problems.
 */
final class AccountIntake {

  /** How many problems a message lists; the rest are counted. */
  static final int REPORTED_PROBLEMS = 20;

  /** Names a position in messages; {@code column} is 1 or 2 for one field, 0 for the row. */
  interface Where {
    String at(long position, int column);
  }

  private final String source;
  private final Where where;
  private final int batchSize;
  private final long maxItems;
  private final ScopeSink sink;
  private final ScopeSink.ReadSoFar after;
  private final MessageDigest digest = ScopeDigests.sha256();
  // the first problems by position: repeats are learned a batch late, out of order
  private final TreeMap<Long, String> problems = new TreeMap<>();
  private long problemCount;
  private long count;
  private List<ScopeSink.Positioned> batch;

  /**
   * @param source names the scope in messages, e.g. {@code the scope CSV (scope.path)}
   * @param after what a staging cut off by a fault had staged already: those accounts are read,
   *     checked and digested again but not handed to the sink, and must digest as they did then
   */
  AccountIntake(
      String source,
      Where where,
      int batchSize,
      long maxItems,
      ScopeSink sink,
      ScopeSink.ReadSoFar after) {
    this.source = source;
    this.where = where;
    this.batchSize = batchSize;
    this.maxItems = maxItems;
    this.sink = sink;
    this.after = after;
    this.batch = new ArrayList<>(batchSize);
  }

  /** How many valid accounts were read so far. */
  long count() {
    return count;
  }

  void accept(long position, String accountId, String cursor) {
    boolean accountOk = ItemId.isSegment(accountId);
    boolean cursorOk = ItemId.isSegment(cursor);
    if (!accountOk || !cursorOk) {
      problem(
          position,
          accountOk ? 2 : 1,
          (accountOk ? "cursor" : "accountId")
              + " must be "
              + ItemId.SEGMENT_RULE
              + (accountOk || cursorOk ? "" : "; so must cursor"));
      return;
    }
    if (++count > maxItems) {
      throw new ScopeTooLarge(source, maxItems);
    }
    // the digest covers every valid account; with a repeat the scope is refused anyway
    digest.update(accountId.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) ',');
    digest.update(cursor.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) '\n');
    if (count <= after.accounts()) {
      // staged before the fault: only its digest is checked, where the staged part ends
      if (count == after.accounts() && !digestSoFar().equals(after.digest())) {
        throw new ScopeChanged(source, after.accounts());
      }
      return;
    }
    batch.add(new ScopeSink.Positioned(position, new AccountCursor(accountId, cursor)));
    if (batch.size() == batchSize) {
      flush();
    }
  }

  void problem(long position, String description) {
    problem(position, 0, description);
  }

  private void problem(long position, int column, String description) {
    problemCount++;
    problems.put(position, where.at(position, column) + ": " + description);
    if (problems.size() > REPORTED_PROBLEMS) {
      problems.pollLastEntry();
    }
  }

  /** Hands on the last batch and answers the summary, or throws if anything was wrong. */
  ScopeSummary finish() {
    flush();
    if (count < after.accounts()) {
      throw new ScopeChanged(source, after.accounts());
    }
    reportRepeats(sink.finish(soFar()));
    if (problemCount > 0) {
      StringBuilder message =
          new StringBuilder(source)
              .append(" has ")
              .append(problemCount)
              .append(problemCount == 1 ? " invalid entry:" : " invalid entries:");
      List<String> listed = new ArrayList<>(problems.values());
      listed.forEach(p -> message.append("\n  ").append(p));
      if (problemCount > listed.size()) {
        message.append("\n  ... and ").append(problemCount - listed.size()).append(" more");
      }
      throw new ScopeException(message.toString(), listed, null);
    }
    if (count == 0) {
      throw new ScopeException(source + " has no accounts");
    }
    return new ScopeSummary(count, HexFormat.of().formatHex(digest.digest()));
  }

  private void flush() {
    if (batch.isEmpty()) {
      return;
    }
    List<ScopeSink.Positioned> staged = batch;
    batch = new ArrayList<>(batchSize);
    reportRepeats(sink.stage(staged, soFar()));
  }

  private void reportRepeats(List<ScopeSink.Positioned> repeats) {
    for (ScopeSink.Positioned repeat : repeats) {
      long position = repeat.position();
      boolean reported = problems.size() < REPORTED_PROBLEMS || position < problems.lastKey();
      long first = reported ? sink.firstPositionOf(repeat.account()) : -1;
      // count = valid accounts, a repeat included: the limit is about what was sent
      problem(position, reported ? "duplicate of " + where.at(first, 0) : "duplicate");
    }
  }

  /** The read so far: every batch handed on carries it, for a sink that commits in steps. */
  private ScopeSink.ReadSoFar soFar() {
    return new ScopeSink.ReadSoFar(count, digestSoFar(), problemCount == 0);
  }

  /** The digest of the accounts read so far, the digest itself going on. */
  private String digestSoFar() {
    try {
      return HexFormat.of().formatHex(((MessageDigest) digest.clone()).digest());
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException("the JDK's SHA-256 can be cloned", e);
    }
  }
}

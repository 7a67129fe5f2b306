package io.fencekeeper.run.scope;

import io.fencekeeper.item.ItemId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * One pass over a scope's accounts, whatever their source: validates each account, detects
 * duplicates, digests the accounts in order and hands them on in batches. Problems are collected,
 * not thrown one by one, so the operator sees every bad row of a file at once; after the first
 * problem nothing more is handed on, because the caller will discard the run anyway.
 */
final class AccountIntake {

  /** How many problems a message lists; the rest are counted. */
  static final int REPORTED_PROBLEMS = 20;

  private final String source;
  private final LongFunction<String> where;
  private final int batchSize;
  private final Consumer<List<AccountCursor>> batches;
  private final MessageDigest digest = ScopeDigests.sha256();
  private final AccountFingerprints seen = new AccountFingerprints();
  private final List<String> problems = new ArrayList<>();
  private long problemCount;
  private long count;
  private List<AccountCursor> batch;

  /**
   * @param source names the scope in messages, e.g. {@code scope CSV 'accounts.csv'}
   * @param where names a position in messages, e.g. {@code line 7} or {@code accounts[6]}
   */
  AccountIntake(
      String source,
      LongFunction<String> where,
      int batchSize,
      Consumer<List<AccountCursor>> batches) {
    this.source = source;
    this.where = where;
    this.batchSize = batchSize;
    this.batches = batches;
    this.batch = new ArrayList<>(batchSize);
  }

  void accept(long position, String accountId, String cursor) {
    String invalid = join(segmentProblem("accountId", accountId), segmentProblem("cursor", cursor));
    if (invalid != null) {
      problem(position, invalid);
      return;
    }
    long earlier = seen.firstSeenAt(accountId, cursor, position);
    if (earlier >= 0) {
      problem(
          position,
          "duplicate of "
              + where.apply(earlier)
              + " (accountId '"
              + accountId
              + "', cursor '"
              + cursor
              + "')");
      return;
    }
    count++;
    if (problemCount > 0) {
      return; // the run will not be created: stop handing accounts on
    }
    digest.update(accountId.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) ',');
    digest.update(cursor.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) '\n');
    batch.add(new AccountCursor(accountId, cursor));
    if (batch.size() == batchSize) {
      flush();
    }
  }

  void problem(long position, String description) {
    problemCount++;
    if (problems.size() < REPORTED_PROBLEMS) {
      problems.add(where.apply(position) + ": " + description);
    }
  }

  /** Hands on the last batch and answers the summary, or throws if anything was wrong. */
  ScopeSummary finish() {
    if (problemCount > 0) {
      StringBuilder message =
          new StringBuilder(source)
              .append(" has ")
              .append(problemCount)
              .append(problemCount == 1 ? " invalid entry:" : " invalid entries:");
      problems.forEach(p -> message.append("\n  ").append(p));
      if (problemCount > problems.size()) {
        message.append("\n  ... and ").append(problemCount - problems.size()).append(" more");
      }
      throw new ScopeException(message.toString(), problems, null);
    }
    if (count == 0) {
      throw new ScopeException(source + " has no accounts");
    }
    flush();
    return new ScopeSummary(count, HexFormat.of().formatHex(digest.digest()));
  }

  private void flush() {
    if (!batch.isEmpty()) {
      batches.accept(List.copyOf(batch));
      batch = new ArrayList<>(batchSize);
    }
  }

  private static String segmentProblem(String field, String value) {
    try {
      ItemId.requireSegment(field, value);
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  private static String join(String first, String second) {
    if (first == null) {
      return second;
    }
    return second == null ? first : first + "; " + second;
  }
}

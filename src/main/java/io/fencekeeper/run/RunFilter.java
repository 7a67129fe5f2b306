package io.fencekeeper.run;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Base64;
import java.util.Comparator;
import java.util.Optional;
import java.util.Set;

/**
 * Which runs a list shows, and where a page starts: runs newest first (by creation, then id),
 * filtered by state, job and business-date range; {@code after} is the last run of the previous
 * page. Every field may be absent (null or empty: no filter).
 */
public record RunFilter(
    Set<RunState> states, String job, LocalDate from, LocalDate to, Cursor after, int limit) {

  /** The most runs one page holds. */
  public static final int MAX_LIMIT = 500;

  public static final int DEFAULT_LIMIT = 100;

  public RunFilter {
    states = states == null ? Set.of() : Set.copyOf(states);
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must be 1 to " + MAX_LIMIT + ", got " + limit);
    }
  }

  /** Every run, newest first, one page of {@code limit}. */
  public static RunFilter all(int limit) {
    return new RunFilter(Set.of(), null, null, null, null, limit);
  }

  /** The order of every run list: newest first, then by id. */
  public static final Comparator<RunView> NEWEST_FIRST =
      Comparator.comparing(
              (RunView run) -> run.createdAt() == null ? Instant.EPOCH : run.createdAt())
          .reversed()
          .thenComparing(RunView::runId);

  /** Whether {@code run} belongs in this list, after the cursor. */
  public boolean matches(RunView run) {
    if (!states.isEmpty() && !states.contains(run.state())) {
      return false;
    }
    if (job != null && !job.equals(run.job())) {
      return false;
    }
    LocalDate date = LocalDate.parse(run.businessDate());
    if ((from != null && date.isBefore(from)) || (to != null && date.isAfter(to))) {
      return false;
    }
    return after == null || after.before(run);
  }

  /** Where the next page starts: after {@code createdAt} and {@code runId} in the list's order. */
  public record Cursor(Instant createdAt, String runId) {

    public static Cursor of(RunView last) {
      return new Cursor(last.createdAt() == null ? Instant.EPOCH : last.createdAt(), last.runId());
    }

    /** Whether {@code run} comes after this cursor in the list's order (newest first). */
    boolean before(RunView run) {
      Instant created = run.createdAt() == null ? Instant.EPOCH : run.createdAt();
      int c = created.compareTo(createdAt);
      return c < 0 || (c == 0 && run.runId().compareTo(runId) > 0);
    }

    /** An opaque token for the API: the instant and the id, URL-safe. */
    public String token() {
      String plain = createdAt.toString() + "|" + runId;
      return Base64.getUrlEncoder()
          .withoutPadding()
          .encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    }

    /** The cursor of a token; empty when the token is not one this API wrote. */
    public static Optional<Cursor> parse(String token) {
      try {
        String plain = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        int bar = plain.indexOf('|');
        if (bar < 0) {
          return Optional.empty();
        }
        return Optional.of(
            new Cursor(Instant.parse(plain.substring(0, bar)), plain.substring(bar + 1)));
      } catch (RuntimeException e) {
        return Optional.empty();
      }
    }
  }
}

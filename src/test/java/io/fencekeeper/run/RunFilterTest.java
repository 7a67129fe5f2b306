package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which runs a list shows and where its next page starts. */
class RunFilterTest {

  static RunView run(String job, String date, RunState state, Instant createdAt) {
    return new RunView(
        job + "/" + date,
        job,
        date,
        state,
        createdAt,
        null,
        null,
        null,
        3,
        0,
        0,
        Counts.allPending(1),
        0,
        0,
        null,
        0,
        0,
        0,
        0,
        0,
        0,
        null,
        null,
        null,
        "scope",
        "default",
        null,
        null);
  }

  static final Instant T = Instant.parse("2026-11-30T01:00:00Z");

  @Test
  void filtersByStateJobAndBusinessDateRange() {
    RunFilter filter =
        new RunFilter(
            Set.of(RunState.PARTIAL, RunState.FAILED),
            "nightly",
            LocalDate.parse("2026-11-01"),
            LocalDate.parse("2026-11-30"),
            null,
            10);
    assertTrue(filter.matches(run("nightly", "2026-11-15", RunState.PARTIAL, T)));
    assertFalse(filter.matches(run("nightly", "2026-11-15", RunState.SUCCEEDED, T)));
    assertFalse(filter.matches(run("other", "2026-11-15", RunState.PARTIAL, T)));
    assertFalse(filter.matches(run("nightly", "2026-10-31", RunState.FAILED, T)));
    assertTrue(filter.matches(run("nightly", "2026-11-30", RunState.FAILED, T)), "to is inclusive");
  }

  @Test
  void pagesFollowOneAnotherWithoutGapOrRepeat() {
    List<RunView> all = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      // pairs created at the same instant: the id breaks the tie
      all.add(
          run(
              "job" + (i % 2),
              "2026-11-" + (10 + i / 2),
              RunState.SUCCEEDED,
              T.plusSeconds(i / 2)));
    }
    all.sort(RunFilter.NEWEST_FIRST);
    List<RunView> seen = new ArrayList<>();
    RunFilter.Cursor after = null;
    do {
      RunFilter page = new RunFilter(Set.of(), null, null, null, after, 7);
      List<RunView> rows = all.stream().filter(page::matches).limit(7).toList();
      seen.addAll(rows);
      after = rows.size() < 7 ? null : RunFilter.Cursor.of(rows.get(rows.size() - 1));
    } while (after != null);
    assertEquals(all, seen);
  }

  @Test
  void aCursorTokenRoundTripsAndAForeignOneIsRefused() {
    RunFilter.Cursor cursor = new RunFilter.Cursor(T, "nightly/2026-11-29");
    assertEquals(Optional.of(cursor), RunFilter.Cursor.parse(cursor.token()));
    assertEquals(Optional.empty(), RunFilter.Cursor.parse("not base64 !"));
    assertEquals(Optional.empty(), RunFilter.Cursor.parse("bm8tYmFy")); // "no-bar"
    assertThrows(IllegalArgumentException.class, () -> RunFilter.all(0));
    assertThrows(IllegalArgumentException.class, () -> RunFilter.all(RunFilter.MAX_LIMIT + 1));
  }
}

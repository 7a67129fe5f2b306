package io.fencekeeper.api.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.run.Counts;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.governor.GovernorPolicy;
import io.fencekeeper.run.governor.GovernorView;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a Prometheus scrape of a node shows (docs/design.md, "Observability"), read from the text
 * exposition as Prometheus reads it: each run's items by status and counters as its run view has
 * them, a run no longer shown leaving the scrape, the governor's mode as one series per mode, and
 * provider calls by outcome.
 */
class ApiMetricsTest {

  static final Instant T0 = Instant.parse("2026-11-29T01:00:00Z");

  static RunView run(
      String runId, RunState state, Counts counts, long takeovers, GovernorPolicy.Mode mode) {
    return new RunView(
        runId,
        "job",
        "2026-11-29",
        state,
        T0,
        T0.plusSeconds(3600),
        state.ended() ? T0.plusSeconds(60) : null,
        null,
        5,
        0,
        0,
        counts,
        12.5,
        10,
        null,
        2,
        takeovers,
        1,
        7,
        40,
        0,
        Map.of(),
        new GovernorView(mode, 8, "why", List.of()),
        null,
        null,
        "default",
        null,
        null);
  }

  /**
   * The value of the series {@code name} whose labels include {@code labels} (in any order, among
   * others), or null when the scrape has none.
   */
  static Double series(String scrape, String name, Map<String, String> labels) {
    Matcher line =
        Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{([^}]*)\\} (\\S+)$").matcher(scrape);
    while (line.find()) {
      String set = line.group(1);
      boolean all =
          labels.entrySet().stream()
              .allMatch(e -> set.contains(e.getKey() + "=\"" + e.getValue() + "\""));
      if (all) {
        return Double.parseDouble(line.group(2));
      }
    }
    return null;
  }

  @Test
  void aRunsItemsAndCountersAreItsRunViewsAndAnUpdateMovesThem() {
    ApiMetrics metrics = new ApiMetrics();
    metrics.updateRuns(
        List.of(
            run(
                "nightly/2026-11-29",
                RunState.RUNNING,
                new Counts(100, 60, 10, 30, 0, 0, 0),
                3,
                GovernorPolicy.Mode.BURST)));
    String scrape = metrics.scrape();
    Map<String, String> run = Map.of("run", "nightly/2026-11-29");

    assertEquals(
        30.0,
        series(scrape, "fencekeeper_items", Map.of("run", "nightly/2026-11-29", "status", "done")));
    assertEquals(
        10.0,
        series(
            scrape, "fencekeeper_items", Map.of("run", "nightly/2026-11-29", "status", "leased")));
    assertEquals(3.0, series(scrape, "fencekeeper_run_takeovers_total", run));
    assertEquals(40.0, series(scrape, "fencekeeper_run_attempts_total", run));
    assertEquals(7.0, series(scrape, "fencekeeper_run_throttled_answers_total", run));
    assertEquals(1.0, series(scrape, "fencekeeper_run_running", run));
    assertEquals(8.0, series(scrape, "fencekeeper_governor_run_cap", run));
    assertEquals(
        1.0,
        series(
            scrape,
            "fencekeeper_governor_mode",
            Map.of("run", "nightly/2026-11-29", "mode", "burst")));
    assertEquals(
        0.0,
        series(
            scrape,
            "fencekeeper_governor_mode",
            Map.of("run", "nightly/2026-11-29", "mode", "normal")),
        "one series per mode, 1 for the mode in force");

    // the next scrape's view: more done, more takeovers, and the run has ended
    metrics.updateRuns(
        List.of(
            run(
                "nightly/2026-11-29",
                RunState.SUCCEEDED,
                new Counts(100, 0, 0, 100, 0, 0, 0),
                5,
                GovernorPolicy.Mode.NORMAL)));
    scrape = metrics.scrape();
    assertEquals(
        100.0,
        series(scrape, "fencekeeper_items", Map.of("run", "nightly/2026-11-29", "status", "done")));
    assertEquals(5.0, series(scrape, "fencekeeper_run_takeovers_total", run));
    assertEquals(0.0, series(scrape, "fencekeeper_run_running", run));
    assertNull(
        series(scrape, "fencekeeper_governor_run_cap", run), "an ended run has no cap in force");
  }

  @Test
  void aRunNoLongerShownLeavesTheScrape() {
    ApiMetrics metrics = new ApiMetrics();
    Counts counts = new Counts(10, 10, 0, 0, 0, 0, 0);
    metrics.updateRuns(
        List.of(
            run("a/2026-11-28", RunState.SUCCEEDED, counts, 1, GovernorPolicy.Mode.NORMAL),
            run("b/2026-11-29", RunState.RUNNING, counts, 1, GovernorPolicy.Mode.NORMAL)));

    metrics.updateRuns(
        List.of(run("b/2026-11-29", RunState.RUNNING, counts, 1, GovernorPolicy.Mode.NORMAL)));

    String scrape = metrics.scrape();
    assertEquals(
        1.0, series(scrape, "fencekeeper_run_takeovers_total", Map.of("run", "b/2026-11-29")));
    assertNull(series(scrape, "fencekeeper_run_takeovers_total", Map.of("run", "a/2026-11-28")));
    assertNull(
        series(scrape, "fencekeeper_items", Map.of("run", "a/2026-11-28", "status", "pending")));
    assertEquals(
        -1,
        scrape.indexOf("a/2026-11-28"),
        "nothing of the run is left: the scrape never grows with history");
  }

  @Test
  void providerCallsAreCountedByOutcomeAndThrottlesApart() {
    ApiMetrics metrics = new ApiMetrics();
    metrics.providerCall("apply", Duration.ofMillis(20), null);
    metrics.providerCall(
        "apply",
        Duration.ofMillis(30),
        new ProviderError.Throttled(Duration.ofSeconds(1), "slow down"));
    metrics.providerCall(
        "lookup", Duration.ofMillis(5), new ProviderError.Permanent("no such account"));

    String scrape = metrics.scrape();

    assertEquals(
        1.0,
        series(
            scrape,
            "fencekeeper_provider_call_seconds_count",
            Map.of("operation", "apply", "outcome", "ok")));
    assertEquals(
        1.0,
        series(
            scrape,
            "fencekeeper_provider_call_seconds_count",
            Map.of("operation", "apply", "outcome", "throttled")));
    assertEquals(
        1.0,
        series(
            scrape,
            "fencekeeper_provider_call_seconds_count",
            Map.of("operation", "lookup", "outcome", "permanent")));
    assertEquals(
        1.0, series(scrape, "fencekeeper_provider_errors_total", Map.of("kind", "permanent")));
    assertNull(
        series(scrape, "fencekeeper_provider_errors_total", Map.of("kind", "throttled")),
        "a throttled answer is a throttle, not an error");
  }

  @Test
  void retentionsCountersAreThereAtZeroBeforeItsFirstPass() {
    ApiMetrics metrics = new ApiMetrics();
    String before = metrics.scrape();
    assertEquals(0.0, value(before, "fencekeeper_retention_runs_archived_total"));
    assertEquals(0.0, value(before, "fencekeeper_retention_rows_deleted_total"));

    metrics.runArchived(4096);
    metrics.rowsDeleted(250);

    String after = metrics.scrape();
    assertEquals(1.0, value(after, "fencekeeper_retention_runs_archived_total"));
    assertEquals(4096.0, value(after, "fencekeeper_retention_archive_bytes_total"));
    assertEquals(250.0, value(after, "fencekeeper_retention_rows_deleted_total"));
  }

  /** The value of a series without labels. */
  static Double value(String scrape, String name) {
    Matcher line = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\S+)$").matcher(scrape);
    return line.find() ? Double.parseDouble(line.group(1)) : null;
  }
}

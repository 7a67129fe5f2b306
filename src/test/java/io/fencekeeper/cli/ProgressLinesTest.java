package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.run.Counts;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.StagingProgress;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The progress lines of {@code run} and {@code status --follow} while a run is STAGING: the rows of
 * its scope staged so far and their rate, and what staging waits for, instead of a bar of items
 * that do not exist yet.
 */
class ProgressLinesTest {

  static final Instant CREATED = Instant.parse("2026-11-29T22:00:00Z");

  static RunView staging(long rows, double perSecond, int resumes, String why) {
    return RunCommandTest.view(RunState.STAGING, counts(rows), CREATED, null, why)
        .withStaging(new StagingProgress(rows, perSecond, resumes));
  }

  static Counts counts(long total) {
    return new Counts(total, 0, 0, 0, 0, 0);
  }

  @Test
  void runShowsTheRowsStagedAndTheirRateWhileItsScopeIsStaged() {
    assertEquals(
        "staging: 350000 rows staged  118204 rows/s",
        ProgressPrinter.line(staging(350_000, 118_203.6, 0, null)));
    assertEquals(
        "staging: 15000 rows staged  0 rows/s  resumed 1x  (waiting to commit a step of the scope:"
            + " a database connection failed (SQLState 08006); retrying)",
        ProgressPrinter.line(
            staging(
                15_000,
                0,
                1,
                "waiting to commit a step of the scope: a database connection failed (SQLState"
                    + " 08006); retrying")));
  }

  @Test
  void statusFollowShowsTheRowsStagedAndTheirRateFromTheApisRun() throws Exception {
    JsonNode run =
        new ObjectMapper()
            .readTree(
                "{\"runId\":\"nightly/2026-11-29\",\"state\":\"STAGING\","
                    + "\"deadline\":\"2026-11-30T06:00:00Z\",\"endReason\":null,"
                    + "\"counts\":{\"total\":350000},"
                    + "\"staging\":{\"rowsStaged\":350000,\"rowsPerSecond\":118203.6,\"resumes\":0}}");

    String line = RunFollower.line(run);

    assertTrue(
        line.endsWith(
            " nightly/2026-11-29 STAGING   staged 350000 rows  118204 rows/s"
                + "  deadline 2026-11-30T06:00:00Z"),
        line);
  }
}

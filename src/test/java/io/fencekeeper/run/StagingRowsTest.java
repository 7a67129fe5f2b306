package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What a staging row says: whether a staging cut off by a fault can go on, and the run a client
 * sees meanwhile (its progress, and what it waits for).
 */
class StagingRowsTest {

  static final Instant NOW = Instant.parse("2026-11-29T23:00:00Z");
  static final Instant DEADLINE = Instant.parse("2026-11-30T06:00:00Z");

  static RunRequest request(Scope scope) {
    return new RunRequest("nightly", LocalDate.parse("2026-11-29"), scope, DEADLINE, 5, 0);
  }

  static StagingTable.Row row(
      RunRequest request, Duration heartbeatAge, Long scopeCount, String failure) {
    String kind = StagingRows.kind(request);
    return new StagingTable.Row(
        request.runId(),
        "scope-1",
        StagingRows.requestDigest(request),
        request.job(),
        request.businessDate().toString(),
        request.deadline().toString(),
        request.maxAttempts(),
        request.maxFailedItems(),
        kind,
        "pekko://fencekeeper@10.0.0.7:25520",
        StagingTable.STAGING,
        40_000,
        failure,
        NOW.minusSeconds(120),
        NOW.minus(heartbeatAge),
        NOW,
        StagingRows.requestJson(request),
        "holder-1",
        "uid-1",
        40_000,
        40_000,
        "digest-40000",
        scopeCount,
        scopeCount == null ? null : "digest-all",
        81_234.5,
        1);
  }

  static final RunRequest FILE = request(new Scope.Csv("accounts.csv"));
  static final RunRequest UPLOAD = request(new Scope.Upload());

  @Test
  void aFileOrQueryCanGoOnAnUploadOnlyOnceStagedInFull() {
    Duration stale = Duration.ofMinutes(2);
    assertEquals(
        Optional.empty(),
        StagingRows.whyItCannotGoOn(row(FILE, stale, null, null), Optional.of(FILE), NOW));
    assertEquals(
        Optional.empty(),
        StagingRows.whyItCannotGoOn(row(UPLOAD, stale, 70_000L, null), Optional.of(UPLOAD), NOW),
        "answered: created from its rows");
    String cutOff =
        StagingRows.whyItCannotGoOn(row(UPLOAD, stale, null, null), Optional.of(UPLOAD), NOW)
            .orElseThrow();
    assertTrue(cutOff.contains("send the upload again"), cutOff);
    assertTrue(
        StagingRows.whyItCannotGoOn(row(FILE, stale, null, null), Optional.empty(), NOW)
            .orElseThrow()
            .contains("create the run again"),
        "a row of an older version kept no request");
  }

  @Test
  void pastItsDeadlineOnlyAScopeStagedInFullGoesOnAndItsRunEndsAtOnce() {
    Instant late = DEADLINE.plusSeconds(1);
    Duration stale = Duration.ofMinutes(2);

    assertTrue(
        StagingRows.whyItCannotGoOn(row(FILE, stale, null, null), Optional.of(FILE), late)
            .orElseThrow()
            .contains("deadline passed"));
    assertEquals(
        Optional.empty(),
        StagingRows.whyItCannotGoOn(row(FILE, stale, 70_000L, null), Optional.of(FILE), late));
  }

  @Test
  void aStagingRunShowsItsRowsTheirRateAndWhatItWaitsFor() {
    RunView live = StagingRows.view(row(FILE, Duration.ofSeconds(1), null, null));
    assertEquals(RunState.STAGING, live.state());
    assertEquals(new StagingProgress(40_000, 81_234.5, 1), live.staging());
    assertEquals(40_000, live.counts().total());
    assertNull(live.endReason());

    String fault =
        "waiting to commit a step of the scope: a database connection failed (SQLState"
            + " 08006); retrying";
    assertEquals(
        fault, StagingRows.view(row(FILE, Duration.ofSeconds(1), null, fault)).endReason());

    RunView stale = StagingRows.view(row(FILE, Duration.ofMinutes(2), null, null));
    assertEquals(0, stale.staging().rowsPerSecond(), "not heard from: no rate");
    assertTrue(
        stale.endReason().contains("no heartbeat from pekko://fencekeeper@10.0.0.7:25520")
            && stale.endReason().contains("goes on from row 40000 by itself"),
        stale.endReason());
  }

  @Test
  void theRequestIsKeptWhole() {
    RunRequest inline =
        new RunRequest(
            "nightly",
            LocalDate.parse("2026-11-29"),
            new Scope.Inline(List.of(new AccountCursor("a-1", "c-1"))),
            DEADLINE,
            7,
            3,
            "payments");

    assertEquals(
        Optional.of(inline),
        StagingRows.request(row(inline, Duration.ZERO, null, null)),
        "scope, deadline, limits and provider, as another node reads them to go on");
  }
}

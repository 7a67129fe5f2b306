package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.run.scope.ScopeSink;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@code run_staging} table on PostgreSQL, as the nodes that stage a run's scope see it: of two
 * claims of one run the first wins and the second is told so, not failed; of two take-overs of one
 * row one wins, a stager that was alive after all (its heartbeat moved on) keeps its row, and the
 * stager it was taken from finds out at its next heartbeat or step; a step's progress commits with
 * the step or not at all; a failed staging keeps its reason, stops heartbeating and can be started
 * over; a row goes only with its own holder. The staging scenarios around it are {@link
 * RunStagingContract}'s.
 */
class StagingTableTest {

  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final AtomicInteger RUNS = new AtomicInteger();

  static RunItemStore store;
  static StagingTable table;

  @BeforeAll
  static void database() {
    store = new RunItemStore(TestDatabases.migrated(TestDatabases.freshPostgres()));
    table = new StagingTable(store.dataSource());
  }

  @AfterAll
  static void close() {
    store.close();
  }

  /** A claim of a run of its own, by {@code node}, for the scope {@code scopeId}. */
  static StagingTable.Claim claim(String job, String scopeId, String node) {
    RunRequest request =
        new RunRequest(
            job,
            DATE,
            new Scope.Inline(List.of(new AccountCursor("a-1", "c-1"))),
            Instant.parse("2026-11-30T06:00:00Z"),
            5,
            10);
    return new StagingTable.Claim(
        request.runId(),
        scopeId,
        "holder-" + scopeId + "-" + node,
        "digest-" + scopeId,
        request,
        StagingRows.requestJson(request),
        "inline",
        node,
        "uid-" + node);
  }

  static String job() {
    return "staged-" + RUNS.incrementAndGet();
  }

  static StagingTable.Row row(StagingTable.Claim claim) {
    return table.find(claim.runId()).orElseThrow();
  }

  @Test
  void ofTwoClaimsOfOneRunTheFirstWinsAndTheSecondIsToldSo() {
    String job = job();
    StagingTable.Claim first = claim(job, "scope-a", "node-1");

    assertTrue(table.insert(first));
    assertFalse(table.insert(claim(job, "scope-b", "node-2")), "not an error: another node's run");

    StagingTable.Row row = row(first);
    assertEquals("scope-a", row.scopeId());
    assertEquals("node-1", row.node());
    assertEquals(first.holder(), row.holder());
    assertEquals("uid-node-1", row.incarnation());
    assertEquals(StagingTable.STAGING, row.state());
    assertEquals(0, row.rowsStaged());
    assertEquals("2026-11-30T06:00:00Z", row.deadline());
    assertEquals(first.request(), StagingRows.request(row).orElseThrow(), "kept to go on with");
    assertTrue(
        !row.heartbeatAge().isNegative() && row.heartbeatAge().compareTo(Duration.ofMinutes(1)) < 0,
        "the heartbeat's age by the database's own clock: " + row.heartbeatAge());
  }

  @Test
  void ofTwoTakeOversOneWinsAndTheStagerItWasTakenFromFindsOutAtItsHeartbeat() {
    String job = job();
    StagingTable.Claim dead = claim(job, "scope-a", "node-1");
    table.insert(dead);
    assertTrue(table.heartbeat(dead, 500, 10.0));
    StagingTable.Row seen = row(dead);

    assertTrue(table.takeOver(seen, "holder-2", "node-2", "uid-2"));
    assertFalse(table.takeOver(seen, "holder-3", "node-3", "uid-3"), "it read the old holder too");

    StagingTable.Row row = row(dead);
    assertEquals("scope-a", row.scopeId(), "it goes on with the same scope");
    assertEquals("holder-2", row.holder());
    assertEquals("node-2", row.node());
    assertEquals(1, row.resumes());
    assertEquals(500, row.rowsStaged(), "what was staged stays staged");
    assertFalse(table.heartbeat(dead, 600, 1.0), "the old stager lost its row");
    assertEquals(500, row(dead).rowsStaged());
  }

  @Test
  void aStagerWhoseHeartbeatMovedOnSinceItWasReadKeepsItsRow() {
    StagingTable.Claim alive = claim(job(), "scope-a", "node-1");
    table.insert(alive);
    StagingTable.Row seen = row(alive);
    Await.until(
        Duration.ofSeconds(10),
        "the database's clock to move on",
        () -> row(alive).readAt().isAfter(seen.updatedAt()));

    assertTrue(table.heartbeat(alive, 7, 1.0));

    assertFalse(table.takeOver(seen, "holder-2", "node-2", "uid-2"), "it was alive after all");
    assertEquals(alive.holder(), row(alive).holder());
  }

  @Test
  void aStepsProgressCommitsWithTheStepAndOnlyWhileTheRowIsTheStagers() throws SQLException {
    StagingTable.Claim claim = claim(job(), "scope-a", "node-1");
    table.insert(claim);
    ScopeSink.ReadSoFar clean = new ScopeSink.ReadSoFar(20, "digest-of-20", true);

    try (Connection c = store.stagingConnection()) {
      assertTrue(table.recordStep(c, claim, 20, 20, clean));
      c.rollback();
    }
    assertEquals(0, row(claim).nextSeq(), "rolled back with its step");
    try (Connection c = store.stagingConnection()) {
      assertTrue(table.recordStep(c, claim, 20, 20, clean));
      c.commit();
    }
    try (Connection c = store.stagingConnection()) {
      assertTrue(table.recordStep(c, claim, 45, 44, null), "a step with a repeat: no new place");
      c.commit();
    }

    StagingTable.Row row = row(claim);
    assertEquals(45, row.nextSeq());
    assertEquals(44, row.rowsStaged());
    assertEquals(clean, row.resumePoint(), "a stager that takes over goes on from the clean step");
    assertEquals(Optional.of(45), table.nextSeq(claim));
    StagingTable.Claim other = claim(claim.request().job(), "scope-a", "node-2");
    assertEquals(Optional.empty(), table.nextSeq(other), "not the other's row");
    try (Connection c = store.stagingConnection()) {
      assertFalse(table.recordStep(c, other, 90, 90, null), "a stager that lost it writes nothing");
      assertFalse(table.lockHeld(c, other));
      assertTrue(table.lockHeld(c, claim));
      c.rollback();
    }
  }

  @Test
  void aCompleteScopeKeepsItsSummarySoAnyNodeCanCreateTheRunFromItsRows() {
    StagingTable.Claim claim = claim(job(), "scope-a", "node-1");
    table.insert(claim);

    assertTrue(table.recordSummary(claim, 1_000_000, "digest-of-all"));

    StagingTable.Row row = row(claim);
    assertEquals(1_000_000L, row.scopeCount());
    assertEquals("digest-of-all", row.scopeDigest());
    assertFalse(table.recordSummary(claim(claim.request().job(), "scope-a", "node-2"), 1, "x"));
  }

  @Test
  void aFailedStagingKeepsItsReasonStopsHeartbeatingAndCanBeStartedOver() {
    String job = job();
    StagingTable.Claim claim = claim(job, "scope-a", "node-1");
    table.insert(claim);
    table.noteFault(claim, "waiting to commit a step of the scope: SQLState 08006; retrying");
    assertEquals(
        "waiting to commit a step of the scope: SQLState 08006; retrying", row(claim).failure());
    String longReason = "scope row 12: " + "x".repeat(5000);

    table.markFailed(claim, longReason);

    StagingTable.Row failed = row(claim);
    assertEquals(StagingTable.FAILED, failed.state());
    assertEquals(longReason.substring(0, 3900) + "...", failed.failure(), "cut, not refused");
    assertFalse(table.heartbeat(claim, 1, 1.0), "a failed staging is not alive");
    assertFalse(table.takeOver(failed, "holder-2", "node-2", "uid-2"), "failed: not to go on");
    assertTrue(table.startOver(failed, claim(job, "scope-b", "node-2")));
    StagingTable.Row again = row(claim);
    assertEquals(StagingTable.STAGING, again.state());
    assertEquals("scope-b", again.scopeId());
    assertNull(again.failure(), "a create that starts over clears the old reason");
  }

  @Test
  void aRowGoesOnlyWithItsOwnHolderAndTheRowsAreListedByRun() {
    String later = "zz-" + job();
    String earlier = "aa-" + job();
    StagingTable.Claim laterClaim = claim(later, "scope-z", "node-1");
    table.insert(laterClaim);
    table.insert(claim(earlier, "scope-a", "node-1"));
    String laterRun = later + "/" + DATE;

    table.remove(claim(later, "scope-z", "node-2"));
    assertTrue(table.find(laterRun).isPresent(), "a stager that lost the row cannot remove it");

    List<String> listed = table.all().stream().map(StagingTable.Row::runId).toList();
    assertTrue(
        listed.indexOf(earlier + "/" + DATE) < listed.indexOf(laterRun), "by run id: " + listed);
    table.remove(laterClaim);
    assertTrue(table.find(laterRun).isEmpty());
  }
}

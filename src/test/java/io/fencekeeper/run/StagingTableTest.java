package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.TestDatabases;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@code run_staging} table on PostgreSQL, as the nodes that stage a run's scope see it: of two
 * claims of one run the first wins and the second is told so, not failed; of two take-overs of one
 * row one wins, and the stager it was taken from finds out at its next heartbeat; a failed staging
 * keeps its reason, stops heartbeating and can be taken over; a row goes only with its own scope.
 * The staging scenarios around it are {@link RunStagingTest}'s.
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
        request.runId(), scopeId, "digest-" + scopeId, request, "inline", node);
  }

  static String job() {
    return "staged-" + RUNS.incrementAndGet();
  }

  @Test
  void ofTwoClaimsOfOneRunTheFirstWinsAndTheSecondIsToldSo() {
    String job = job();
    StagingTable.Claim first = claim(job, "scope-a", "node-1");

    assertTrue(table.insert(first));
    assertFalse(table.insert(claim(job, "scope-b", "node-2")), "not an error: another node's run");

    StagingTable.Row row = table.find(first.runId()).orElseThrow();
    assertEquals("scope-a", row.scopeId());
    assertEquals("node-1", row.node());
    assertEquals(StagingTable.STAGING, row.state());
    assertEquals(0, row.rowsStaged());
    assertEquals("2026-11-30T06:00:00Z", row.deadline());
    assertTrue(
        !row.heartbeatAge().isNegative() && row.heartbeatAge().compareTo(Duration.ofMinutes(1)) < 0,
        "the heartbeat's age by the database's own clock: " + row.heartbeatAge());
  }

  @Test
  void ofTwoTakeOversOneWinsAndTheStagerItWasTakenFromFindsOutAtItsHeartbeat() {
    String job = job();
    StagingTable.Claim dead = claim(job, "scope-a", "node-1");
    table.insert(dead);
    assertTrue(table.heartbeat(dead.runId(), "scope-a", 500));

    assertTrue(table.takeOver("scope-a", claim(job, "scope-b", "node-2")));
    assertFalse(
        table.takeOver("scope-a", claim(job, "scope-c", "node-3")), "it read the old scope too");

    StagingTable.Row row = table.find(dead.runId()).orElseThrow();
    assertEquals("scope-b", row.scopeId());
    assertEquals("node-2", row.node());
    assertEquals(0, row.rowsStaged(), "the new stager starts from nothing");
    assertFalse(table.heartbeat(dead.runId(), "scope-a", 600), "the old stager lost its row");
    assertTrue(table.heartbeat(dead.runId(), "scope-b", 10));
    assertEquals(10, table.find(dead.runId()).orElseThrow().rowsStaged());
  }

  @Test
  void aFailedStagingKeepsItsReasonStopsHeartbeatingAndCanBeTakenOver() {
    String job = job();
    StagingTable.Claim claim = claim(job, "scope-a", "node-1");
    table.insert(claim);
    String longReason = "scope row 12: " + "x".repeat(5000);

    table.markFailed(claim.runId(), "scope-a", longReason);

    StagingTable.Row failed = table.find(claim.runId()).orElseThrow();
    assertEquals(StagingTable.FAILED, failed.state());
    assertEquals(longReason.substring(0, 3900) + "...", failed.failure(), "cut, not refused");
    assertFalse(table.heartbeat(claim.runId(), "scope-a", 1), "a failed staging is not alive");
    assertTrue(table.takeOver("scope-a", claim(job, "scope-b", "node-2")));
    StagingTable.Row again = table.find(claim.runId()).orElseThrow();
    assertEquals(StagingTable.STAGING, again.state());
    assertNull(again.failure(), "a create that starts over clears the old reason");
  }

  @Test
  void aRowGoesOnlyWithItsOwnScopeAndTheRowsAreListedByRun() {
    String later = "zz-" + job();
    String earlier = "aa-" + job();
    table.insert(claim(later, "scope-z", "node-1"));
    table.insert(claim(earlier, "scope-a", "node-1"));
    String laterRun = later + "/" + DATE;

    table.remove(laterRun, "scope-of-another-stager");
    assertTrue(table.find(laterRun).isPresent(), "a stager that lost the row cannot remove it");

    List<String> listed = table.all().stream().map(StagingTable.Row::runId).toList();
    assertTrue(
        listed.indexOf(earlier + "/" + DATE) < listed.indexOf(laterRun), "by run id: " + listed);
    table.remove(laterRun, "scope-z");
    assertTrue(table.find(laterRun).isEmpty());
  }
}

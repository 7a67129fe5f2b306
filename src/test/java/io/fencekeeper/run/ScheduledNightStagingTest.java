package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemShards;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.schedule.NightlySchedule;
import io.fencekeeper.run.schedule.ScheduleKeeper;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.run.scope.ScopeReader;
import io.fencekeeper.run.scope.ScopeSettings;
import io.fencekeeper.run.scope.ScopeSink;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 50, a scheduled night too: the 01:00 night fired on a node that died while it staged (a
 * third of its scope committed). The schedule does not fire it a second time (its staging row is
 * the run, as far as the schedule is concerned), and the next node's look at interrupted stagings
 * goes on with it from the rows it has: the night runs, nobody created it again. On a real node
 * (H2), whose cluster has never seen the dead node.
 */
class ScheduledNightStagingTest {

  static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
  static final Duration WITHIN = Duration.ofSeconds(60);

  static FencekeeperNode node;
  static ManualClock clock;

  @BeforeAll
  static void start() throws Exception {
    Path dataDir = Files.createTempDirectory("fencekeeper-scheduled-staging");
    clock = ManualClock.at("2026-11-30T00:10:00Z"); // 01:10 in Berlin: the night is due
    node =
        FencekeeperNode.builder(
                FencekeeperNode.config(TestNodes.overrides(TestDatabases.h2File(dataDir), dataDir)))
            .clock(clock)
            .workers(0)
            .start()
            .awaitUp(WITHIN);
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @Test
  void aNightWhoseStagerDiedIsNotFiredAgainAndGoesOnFromItsRows() throws Exception {
    List<AccountCursor> accounts = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      accounts.add(new AccountCursor("acct-" + i, "c-" + (i % 3)));
    }
    NightlySchedule schedule =
        new NightlySchedule(
            "night",
            LocalTime.of(1, 0),
            LocalTime.of(6, 0),
            BERLIN,
            new Scope.Inline(accounts),
            5,
            0);
    // what the firing on the dead node asked for, and the third of it that it committed
    RunRequest fired =
        new RunRequest(
            "night",
            LocalDate.parse("2026-11-29"),
            schedule.scope(),
            Instant.parse("2026-11-30T05:00:00Z"),
            5,
            0);
    diedWhileStaging(fired, accounts.subList(0, 10));
    ScheduleKeeper keeper = new ScheduleKeeper(List.of(schedule), node.runs(), clock);

    ScheduleKeeper.Review review = keeper.review().toCompletableFuture().get(60, TimeUnit.SECONDS);

    assertEquals(List.of(), review.created(), "not fired a second time");
    node.runs().resumeInterruptedStagings();
    RunView run =
        Await.until(
            WITHIN,
            "the night to run",
            () -> node.runs().get(fired.runId()).toCompletableFuture().join().orElse(null),
            view -> view != null && view.state() == RunState.RUNNING);
    assertEquals(30, run.counts().total());
    assertEquals(10, keptRows(run), "the rows the dead node committed were kept");
    assertEquals(
        List.of(),
        keeper.review().toCompletableFuture().get(60, TimeUnit.SECONDS).created(),
        "and it is still the one run");
  }

  /** The staging row and committed rows a node leaves when it dies after its first step. */
  private static void diedWhileStaging(RunRequest fired, List<AccountCursor> committed)
      throws Exception {
    ToIntFunction<AccountCursor> shardOf =
        RunStaging.shardOf(
            new ItemShards(
                node.system()
                    .settings()
                    .config()
                    .getInt("pekko.cluster.sharding.number-of-shards")),
            fired);
    String digest =
        new ScopeReader(ScopeSettings.in(Files.createTempDirectory("scopes")))
            .read(new Scope.Inline(committed), ScopeSink.digestOnly())
            .digest();
    var db = node.database();
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        PreparedStatement staging =
            c.prepareStatement(
                "INSERT INTO run_staging (run_id, scope_id, request_digest, job, business_date,"
                    + " deadline, max_attempts, max_failed_items, scope_kind, node, state,"
                    + " rows_staged, request, holder, incarnation, next_seq, resume_rows,"
                    + " resume_digest, started_at, updated_at) VALUES (?, 'scope-of-the-dead', ?,"
                    + " 'night', '2026-11-29', ?, 5, 0, 'inline', 'pekko://fencekeeper@10.9.9.9:25520',"
                    + " 'STAGING', ?, ?, 'holder-of-the-dead', '4242', ?, ?, ?,"
                    + " DATEADD('HOUR', -1, CURRENT_TIMESTAMP), DATEADD('HOUR', -1,"
                    + " CURRENT_TIMESTAMP))");
        PreparedStatement rows =
            c.prepareStatement(
                "INSERT INTO run_item (scope_id, seq, account_id, provider_cursor,"
                    + " source_position, shard) VALUES ('scope-of-the-dead', ?, ?, ?, ?, ?)")) {
      staging.setString(1, fired.runId());
      staging.setString(2, StagingRows.requestDigest(fired));
      staging.setString(3, fired.deadline().toString());
      staging.setLong(4, committed.size());
      staging.setString(5, StagingRows.requestJson(fired));
      staging.setInt(6, committed.size());
      staging.setLong(7, committed.size());
      staging.setString(8, digest);
      staging.executeUpdate();
      for (int i = 0; i < committed.size(); i++) {
        rows.setInt(1, i);
        rows.setString(2, committed.get(i).accountId());
        rows.setString(3, committed.get(i).cursor());
        rows.setLong(4, 1_000 + i); // not a position this node's read would give
        rows.setInt(5, shardOf.applyAsInt(committed.get(i)));
        rows.executeUpdate();
      }
    }
  }

  private static long keptRows(RunView run) throws Exception {
    var db = node.database();
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT COUNT(*) FROM run_item WHERE scope_id = ? AND source_position >= 1000")) {
      ps.setString(1, run.scopeId());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertTrue(rs.getLong(1) <= 10);
        return rs.getLong(1);
      }
    }
  }
}

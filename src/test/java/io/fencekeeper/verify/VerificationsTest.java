package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.RunView;
import io.fencekeeper.testing.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the verifications of a node decide before and around the keeper ({@link
 * VerificationKeeperTest}, {@link VerificationTest}): a sample nobody chose a seed for states one
 * that a JSON reader holds exactly and that draws the same items again; the latest verification of
 * every run is one per run, the newest; a run still staging, or whose staging failed, has not run
 * and is not verified. One node on H2 with two workers and the simulated provider over HTTP.
 */
class VerificationsTest {

  static VerifyFixture f;

  @BeforeAll
  static void startNode() throws Exception {
    f = new VerifyFixture(TestDatabases::h2File, 11);
    f.startNode(2, Map.of());
  }

  @AfterAll
  static void stopNode() {
    f.close();
  }

  RunView endedRun(String job, int accounts) throws Exception {
    RunView run = f.create(job, VerifyFixture.accounts(accounts));
    return f.awaitEnded(run.runId());
  }

  @Test
  void aSampleWithoutASeedStatesOneThatDrawsTheSameItemsAgain() throws Exception {
    String runId = endedRun("sampled", 8).runId();

    Map<String, Long> before = f.sim.lookups();
    VerificationView unseeded = f.started(runId, 3, OptionalLong.empty());
    f.awaitConcluded(runId, unseeded.number());
    Map<String, Long> drawn = f.lookupsSince(before);
    Map<String, Long> beforeAgain = f.sim.lookups();
    VerificationView seeded = f.started(runId, 3, OptionalLong.of(unseeded.seed()));
    f.awaitConcluded(runId, seeded.number());

    assertTrue(
        unseeded.seed() > 0 && unseeded.seed() < 1L << 53,
        "a JSON reader holding numbers as doubles reads it exactly: " + unseeded.seed());
    assertEquals(3, drawn.size());
    assertEquals(drawn.keySet(), f.lookupsSince(beforeAgain).keySet(), "the stated seed");
  }

  @Test
  void newSeedsAreAlwaysWithinWhatAJsonNumberHoldsExactly() {
    for (int i = 0; i < 10_000; i++) {
      long seed = Verifications.newSeed();
      assertTrue(seed >= 1 && seed < 1L << 53, "seed " + seed);
      assertEquals(seed, (long) (double) seed);
    }
  }

  @Test
  void theLatestOfEveryRunIsOneVerificationPerRunTheNewest() throws Exception {
    String twice = endedRun("verified-twice", 3).runId();
    f.awaitConcluded(twice, f.started(twice, 0, OptionalLong.empty()).number());
    f.awaitConcluded(twice, f.started(twice, 0, OptionalLong.empty()).number());

    List<VerificationView> latest =
        f.node.verifications().latestOfEveryRun().toCompletableFuture().get(30, TimeUnit.SECONDS);

    List<String> runs = latest.stream().map(VerificationView::runId).toList();
    assertEquals(Set.copyOf(runs).size(), runs.size(), "one per run: " + runs);
    VerificationView ofTwice =
        latest.stream().filter(v -> v.runId().equals(twice)).findFirst().orElseThrow();
    assertEquals(2, ofTwice.number(), "the newest");
  }

  @Test
  void aRunStillStagingHasNotRunAndIsNotVerified() throws Exception {
    String staging = staged("still-staging", "STAGING", null);

    assertEquals("run_not_ended", refusal(staging));
    assertTrue(f.node.verifications().list(staging).toCompletableFuture().join().isEmpty());
  }

  /**
   * A run whose staging failed never ran: it has no scope id and no provider, and the run view
   * shows it FAILED ("scope staging failed: ..."), which counts as ended.
   */
  @Test
  void aRunWhoseStagingFailedHasNotRunAndIsNotVerified() throws Exception {
    String failed = staged("staging-failed", "FAILED", "scope row 3: accountId is empty");

    assertEquals("run_never_ran", refusal(failed));
    assertTrue(f.node.verifications().list(failed).toCompletableFuture().join().isEmpty());
  }

  String refusal(String runId) throws Exception {
    VerificationKeeper.StartReply reply = f.verify(runId, 0, OptionalLong.empty());
    return assertInstanceOf(VerificationKeeper.Refused.class, reply, String.valueOf(reply)).error();
  }

  /** A run_staging row as a node staging the run writes it (or leaves it when staging failed). */
  static String staged(String job, String state, String failure) throws SQLException {
    String runId = job + "/" + VerifyFixture.DATE;
    try (Connection c = DriverManager.getConnection(f.db.url(), f.db.user(), f.db.password());
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO run_staging (run_id, scope_id, request_digest, job, business_date,"
                    + " deadline, max_attempts, max_failed_items, scope_kind, node, state,"
                    + " rows_staged, failure) VALUES (?, ?, 'digest', ?, ?, ?, 5, 0, 'inline',"
                    + " 'node-1', ?, 2, ?)")) {
      insert.setString(1, runId);
      insert.setString(2, "scope-" + job);
      insert.setString(3, job);
      insert.setString(4, VerifyFixture.DATE.toString());
      insert.setString(5, Instant.now().plusSeconds(3600).toString());
      insert.setString(6, state);
      insert.setString(7, failure);
      insert.executeUpdate();
    }
    return runId;
  }
}

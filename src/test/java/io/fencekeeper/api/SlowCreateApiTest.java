package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, finding 4: a create that takes longer than the HTTP server's request timeout must not
 * answer 503 while staging goes on, and the client's retry must not stage a second copy. The slow
 * scope is a SQL scope that sleeps in PostgreSQL before its rows come; the node answers 202 STAGING
 * after {@code fencekeeper.create-wait}, well inside a short request timeout.
 */
class SlowCreateApiTest {

  private static final AtomicInteger JOBS = new AtomicInteger();
  private static ApiTestNode api;

  @BeforeAll
  static void nodeWithASlowScopeSource() throws SQLException {
    Map<String, Object> settings = ScopeSqlSource.settings(50, "('bad value', 'c-1')");
    settings.put("fencekeeper.create-wait", "1s");
    settings.put("pekko.http.server.request-timeout", "4s");
    api = ApiTestNode.fresh(settings);
  }

  @AfterAll
  static void close() {
    api.close();
  }

  private static String create(String job, String query, int maxAttempts) {
    return "{\"job\":\""
        + job
        + "\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
        + ApiTestNode.DEADLINE
        + "\",\"maxAttempts\":"
        + maxAttempts
        + ",\"scope\":{\"type\":\"sql\",\"query\":\""
        + query
        + "\"}}";
  }

  /** Six seconds before the first row; each job's accounts carry its name, to count them. */
  private static String slow(String job) {
    return "select account_id || '-"
        + job
        + "' as account_id, cursor from accounts, pg_sleep(6)"
        + " where account_id like 'acct-%' order by account_id";
  }

  @Test
  void aSlowCreateAnswers202StagingAndARetryJoinsItInsteadOfStagingAgain() throws Exception {
    String job = "slow-" + JOBS.incrementAndGet();
    String runId = job + "/2026-11-29";

    ApiTestNode.Answer first = api.post("/api/runs", create(job, slow(job), 5));
    ApiTestNode.Answer shown = api.get("/api/runs/" + ApiTestNode.seg(runId));
    ApiTestNode.Answer listed = api.get("/api/runs");
    ApiTestNode.Answer retry = api.post("/api/runs", create(job, slow(job), 5));

    assertEquals(202, first.status(), first.body());
    assertEquals("STAGING", first.tree().path("state").asText(), first.body());
    assertEquals("STAGING", shown.tree().path("state").asText(), shown.body());
    assertTrue(shown.tree().path("staging").path("rowsStaged").isIntegralNumber(), shown.body());
    assertTrue(shown.tree().path("staging").path("rowsPerSecond").isNumber(), shown.body());
    assertEquals(0, shown.tree().path("staging").path("resumes").asInt(-1), shown.body());
    assertTrue(listed.body().contains("\"runId\":\"" + runId + "\""), listed.body());
    assertEquals(202, retry.status(), retry.body());
    assertEquals("STAGING", retry.tree().path("state").asText());
    ApiTestNode.await(
        () -> api.get("/api/runs/" + ApiTestNode.seg(runId)).tree().path("state").asText(),
        "RUNNING"::equals,
        Duration.ofSeconds(60),
        "the staged run to be created");
    ApiTestNode.Answer afterwards = api.post("/api/runs", create(job, slow(job), 5));
    assertEquals(200, afterwards.status(), afterwards.body());
    assertEquals(50, afterwards.tree().path("counts").path("total").asInt());
    assertTrue(afterwards.tree().path("staging").isNull(), "no staging once it runs");
    assertEquals(50, runItemRows(job), "one copy of the scope was staged, not two");
    assertEquals(0, stagingRows(runId), "the staging row goes once the coordinator has the run");
  }

  @Test
  void aStagingThatFailsAfterAnsweringStagingShowsWhyAndAllowsANewCreate() throws Exception {
    String job = "slow-bad-" + JOBS.incrementAndGet();
    String runId = job + "/2026-11-29";
    String bad = "select account_id, cursor from accounts, pg_sleep(3) order by account_id";

    ApiTestNode.Answer first = api.post("/api/runs", create(job, bad, 5));
    assertEquals(202, first.status(), first.body());
    ApiTestNode.Answer failed =
        ApiTestNode.await(
            () -> api.get("/api/runs/" + ApiTestNode.seg(runId)),
            answer -> answer.tree().path("state").asText().equals("FAILED"),
            Duration.ofSeconds(60),
            "the staging to fail");

    assertTrue(
        failed.tree().path("endReason").asText().contains("row 51: accountId must be"),
        failed.body());
    assertTrue(!failed.body().contains("bad value"), failed.body());
    ApiTestNode.Answer again = api.post("/api/runs", create(job, slow(job), 5));
    assertEquals(202, again.status(), again.body());
  }

  /**
   * A row of an older version, which did not keep its request: it cannot go on, so the run says to
   * create it again (STAGING while nobody has looked, FAILED once a node's look marked it), and a
   * create starts it over.
   */
  @Test
  void aStagingOfAnOlderNodeThatDiedIsStartedOverAndItsRowsDiscarded() throws Exception {
    String job = "dead-" + JOBS.incrementAndGet();
    String runId = job + "/2026-11-29";
    try (Connection c = journal();
        PreparedStatement staging =
            c.prepareStatement(
                "INSERT INTO run_staging (run_id, scope_id, request_digest, job, business_date,"
                    + " deadline, max_attempts, max_failed_items, scope_kind, node, state,"
                    + " rows_staged, started_at, updated_at) VALUES (?, 'dead-scope', 'x', ?,"
                    + " '2026-11-29', ?, 5, 0, 'csv', 'pekko://fencekeeper@dead:1', 'STAGING', 3,"
                    + " DATEADD('HOUR', -1, CURRENT_TIMESTAMP), DATEADD('HOUR', -1,"
                    + " CURRENT_TIMESTAMP))");
        Statement s = c.createStatement()) {
      staging.setString(1, runId);
      staging.setString(2, job);
      staging.setString(3, ApiTestNode.DEADLINE);
      staging.executeUpdate();
      s.execute(
          "INSERT INTO run_item (scope_id, seq, account_id, provider_cursor) VALUES"
              + " ('dead-scope', 0, 'a', 'c'), ('dead-scope', 1, 'b', 'c'),"
              + " ('dead-scope', 2, 'd', 'c')");
    }
    ApiTestNode.Answer abandoned = api.get("/api/runs/" + ApiTestNode.seg(runId));
    assertTrue(
        abandoned.tree().path("endReason").asText().contains("create the run again"),
        abandoned.body());

    ApiTestNode.Answer created =
        api.post(
            "/api/runs",
            "{\"job\":\""
                + job
                + "\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
                + ApiTestNode.DEADLINE
                + "\",\"scope\":{\"type\":\"inline\",\"accounts\":"
                + "[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"}]}}");

    assertEquals(201, created.status(), created.body());
    ApiTestNode.await(
        () -> scopeRows("dead-scope"), n -> n == 0, Duration.ofSeconds(10), "old rows gone");
    assertEquals(0, stagingRows(runId));
  }

  @Test
  void anotherCreateWhileStagingWithOtherParametersIsAConflictNamingThem() throws Exception {
    String job = "busy-" + JOBS.incrementAndGet();
    String runId = job + "/2026-11-29";

    assertEquals(202, api.post("/api/runs", create(job, slow(job), 5)).status());
    ApiTestNode.Answer other = api.post("/api/runs", create(job, slow(job), 3));

    assertEquals(409, other.status(), other.body());
    assertEquals("run_conflict", other.error());
    assertTrue(other.body().contains("maxAttempts (5 vs 3)"), other.body());
    ApiTestNode.await(
        () -> api.get("/api/runs/" + ApiTestNode.seg(runId)).tree().path("state").asText(),
        "RUNNING"::equals,
        Duration.ofSeconds(60),
        "the first create to finish");
  }

  private static Connection journal() throws SQLException {
    var db = api.node.database();
    return DriverManager.getConnection(db.url(), db.user(), db.password());
  }

  private static long runItemRows(String job) {
    return count("SELECT COUNT(*) FROM run_item WHERE account_id LIKE ?", "acct-%-" + job);
  }

  private static long scopeRows(String scopeId) {
    return count("SELECT COUNT(*) FROM run_item WHERE scope_id = ?", scopeId);
  }

  private static long stagingRows(String runId) {
    return count("SELECT COUNT(*) FROM run_staging WHERE run_id = ?", runId);
  }

  private static long count(String sql, String parameter) {
    try (Connection c = journal();
        PreparedStatement ps = c.prepareStatement(sql)) {
      if (parameter != null) {
        ps.setString(1, parameter);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}

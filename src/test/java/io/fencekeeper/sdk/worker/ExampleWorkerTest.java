package io.fencekeeper.sdk.worker;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.ApiTestNode;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ExampleWorkerBuild;
import io.fencekeeper.testing.TestDatabases;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The example worker of examples/external-worker, compiled here against this build's client, works
 * a run on a real node to its end against a real PostgreSQL target: every item DONE with the effect
 * the target holds for its key, and each account debited once.
 */
class ExampleWorkerTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void theExampleWorkerRunsARunToItsEndWithOneEffectPerKeyAtTheTarget() throws Exception {
    int accounts = 12;
    String runId = api.createRun(ApiTestNode.newJob("example"), accounts);
    TestDatabases.Target db = TestDatabases.freshPostgres();
    try (URLClassLoader example =
        new URLClassLoader(
            new URL[] {ExampleWorkerBuild.classes().toUri().toURL()},
            getClass().getClassLoader())) {
      Class<?> targetClass =
          example.loadClass("io.fencekeeper.examples.worker.ReconciliationTarget");
      Object target =
          targetClass
              .getConstructor(String.class, String.class, String.class)
              .newInstance(db.url(), db.user(), db.password());
      targetClass.getMethod("createTables").invoke(target);
      ItemHandler handler =
          (ItemHandler)
              example
                  .loadClass(ExampleWorkerBuild.MAIN)
                  .getConstructor(targetClass, Duration.class, Duration.class)
                  .newInstance(target, Duration.ofSeconds(30), Duration.ZERO);
      FencekeeperWorker worker =
          FencekeeperWorker.builder(URI.create(api.base), runId, handler)
              .token(ApiTestNode.TOKEN)
              .name("example")
              .concurrency(3)
              .drainedPoll(Duration.ofMillis(200))
              .build()
              .start();
      assertTrue(worker.awaitStopped(Duration.ofSeconds(90)), "the worker stops when the run ends");
      assertEquals("run_ended", worker.stoppedBecause().orElse(""));
    }
    Await.until(
        Duration.ofSeconds(30),
        "the run SUCCEEDED",
        () -> api.get("/api/runs/" + seg(runId)).tree().path("state").asText().equals("SUCCEEDED"));

    Map<String, String> effects = new HashMap<>();
    Map<String, Long> balances = new HashMap<>();
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT idempotency_key, effect_id FROM cleanup_effect")) {
        while (rs.next()) {
          effects.put(rs.getString(1), rs.getString(2));
        }
      }
      try (ResultSet rs = s.executeQuery("SELECT account_id, balance_minor FROM account_balance")) {
        while (rs.next()) {
          balances.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    assertEquals(accounts, effects.size(), "one effect per key");
    for (int i = 1; i <= accounts; i++) {
      JsonNode item = api.get("/api/items/" + seg(ApiTestNode.itemId(runId, i))).tree();
      assertEquals("DONE", item.path("status").asText());
      assertEquals(
          effects.get(item.path("idempotencyKey").asText()),
          item.path("effectOutcome").path("providerReference").asText(),
          "the journal's effect is the target's");
      assertEquals(-1_000L, balances.get("a-" + i), "account a-" + i + " debited once");
    }
  }
}

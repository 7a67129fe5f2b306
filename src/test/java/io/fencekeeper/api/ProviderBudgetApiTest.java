package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.provider.budget.BudgetView;
import io.fencekeeper.provider.budget.ProviderBudget;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * GET and PUT /api/providers (docs/design.md, "Provider budgets"): what operators see of a
 * provider's budget, changing it at run time through the router's rules, and a change that survives
 * a restart.
 */
class ProviderBudgetApiTest {

  static final String READ_TOKEN = "read-only-token-0123456789";

  /** Two named providers with budgets: payments for reading, ledger for changing. */
  static final Map<String, Object> PROVIDERS =
      Map.of(
          "fencekeeper.providers.payments.kind",
          "http",
          "fencekeeper.providers.payments.url",
          "http://127.0.0.1:9/",
          "fencekeeper.providers.payments.max-in-flight",
          8,
          "fencekeeper.providers.payments.max-rate",
          40,
          "fencekeeper.providers.ledger.kind",
          "http",
          "fencekeeper.providers.ledger.url",
          "http://127.0.0.1:9/",
          "fencekeeper.providers.ledger.max-in-flight",
          6,
          "fencekeeper.http.api-read-token",
          READ_TOKEN);

  static final ApiTestNode api = ApiTestNode.fresh(PROVIDERS);

  @AfterAll
  static void stop() {
    api.close();
  }

  static JsonNode provider(ApiTestNode.Answer answer, String name) {
    for (JsonNode provider : answer.tree().path("providers")) {
      if (provider.path("provider").asText().equals(name)) {
        return provider;
      }
    }
    throw new AssertionError("no provider " + name + " in " + answer.body());
  }

  ApiTestNode.Answer put(String name, String body, String contentType, String token) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(api.base + "/api/providers/" + name))
            .header("Content-Type", contentType)
            .PUT(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return api.send(request, null);
  }

  @Test
  void everyConfiguredProviderIsListedWithItsBudget() {
    ApiTestNode.Answer list = api.get("/api/providers");
    assertEquals(200, list.status(), list.body());
    JsonNode payments = provider(list, "payments");
    assertEquals(8, payments.path("maxInFlight").asInt());
    assertEquals(40, payments.path("maxRate").asInt());
    assertEquals("config", payments.path("source").asText());
    assertTrue(payments.has("throttling") && payments.has("changes") && payments.has("nodes"));
    // today's FENCEKEEPER_PROVIDER is the provider named default, without a budget
    assertEquals(0, provider(list, "default").path("maxInFlight").asInt());
    assertEquals(401, api.getAs("/api/providers", null).status(), "reads need the token");
  }

  @Test
  void anOperatorChangesTheBudgetAtRunTimeWithTheAdminTokenOnly() {
    String body = "{\"maxInFlight\": 4, \"maxRate\": 10}";
    assertEquals(401, put("ledger", body, "application/json", null).status());
    assertEquals(403, put("ledger", body, "application/json", READ_TOKEN).status());
    assertEquals(415, put("ledger", body, "text/plain", ApiTestNode.TOKEN).status());
    assertEquals(6, provider(api.get("/api/providers"), "ledger").path("maxInFlight").asInt());

    ApiTestNode.Answer set = put("ledger", body, "application/json", ApiTestNode.TOKEN);
    assertEquals(200, set.status(), set.body());
    assertEquals(4, set.tree().path("maxInFlight").asInt());
    assertEquals(10, set.tree().path("maxRate").asInt());
    assertEquals("operator", set.tree().path("source").asText());
    assertEquals(4, set.tree().path("effectiveInFlight").asInt());
    JsonNode last = set.tree().path("changes").get(set.tree().path("changes").size() - 1);
    assertEquals("budget set to 4 in flight, 10 calls/s by operator", last.path("reason").asText());
    assertEquals(4, provider(api.get("/api/providers"), "ledger").path("maxInFlight").asInt());
    assertEquals(200, api.getAs("/api/providers", READ_TOKEN).status(), "the read token reads");
  }

  @Test
  void aBudgetThatCannotBeIsRefusedNamingTheField() {
    ApiTestNode.Answer zero =
        put("ledger", "{\"maxInFlight\": 0}", "application/json", ApiTestNode.TOKEN);
    assertEquals(400, zero.status(), zero.body());
    assertEquals("maxInFlight", zero.tree().path("field").asText());
    ApiTestNode.Answer unknownField =
        put("ledger", "{\"maxInFlight\": 2, \"burst\": 1}", "application/json", ApiTestNode.TOKEN);
    assertEquals(400, unknownField.status(), unknownField.body());
    ApiTestNode.Answer unknown =
        put("nobody", "{\"maxInFlight\": 2}", "application/json", ApiTestNode.TOKEN);
    assertEquals(404, unknown.status(), unknown.body());
    assertEquals("unknown_provider", unknown.error());
  }

  @Test
  void aRunNamesItsProviderAndAnUnknownOneIsRefused() {
    String job = ApiTestNode.newJob("named");
    String create =
        "{\"job\":\""
            + job
            + "\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
            + ApiTestNode.DEADLINE
            + "\",\"provider\":\"%s\",\"scope\":{\"type\":\"inline\",\"accounts\":"
            + "[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"}]}}";
    ApiTestNode.Answer refused = api.post("/api/runs", String.format(create, "nobody"));
    assertEquals(422, refused.status(), refused.body());
    assertEquals("provider", refused.tree().path("field").asText());
    ApiTestNode.Answer created = api.post("/api/runs", String.format(create, "payments"));
    assertEquals(201, created.status(), created.body());
    assertEquals("payments", created.tree().path("provider").asText());
    String runId = job + "%2F2026-11-29";
    Await.until(
        Duration.ofSeconds(20),
        "the run's share of its provider's budget",
        () ->
            provider(api.get("/api/providers"), "payments").path("runs").toString().contains(job));
    assertEquals("payments", api.get("/api/runs/" + runId).tree().path("provider").asText());
  }

  @Test
  void theBudgetsAreMetricsPerProvider() {
    api.get("/api/providers");
    String scrape = api.get("/metrics").body();
    assertTrue(
        scrape.contains(
            "fencekeeper_provider_budget_in_flight{kind=\"max\",provider=\"payments\"}"),
        scrape);
    assertTrue(scrape.contains("fencekeeper_provider_budget_rate{kind=\"effective\""), scrape);
    assertTrue(
        scrape.contains("fencekeeper_provider_budget_throttles_total{provider=\"payments\"}"));
  }

  @Test
  void anOperatorsBudgetSurvivesARestart() throws Exception {
    Path dir = Files.createTempDirectory("fk-budget-restart");
    Map<String, Object> overrides = TestNodes.overrides(TestDatabases.h2File(dir), dir);
    overrides.putAll(PROVIDERS);
    try (FencekeeperNode first =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .workers(0)
            .start()
            .awaitUp(Duration.ofSeconds(60))) {
      assertInstanceOf(
          BudgetKeeper.BudgetSet.class,
          first
              .budgets()
              .set("payments", new ProviderBudget(3, 9))
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS));
    }
    try (FencekeeperNode again =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .workers(0)
            .start()
            .awaitUp(Duration.ofSeconds(60))) {
      Optional<BudgetView> payments =
          again.budgets().views().toCompletableFuture().get(20, TimeUnit.SECONDS).stream()
              .filter(view -> view.provider().equals("payments"))
              .findFirst();
      assertEquals(3, payments.orElseThrow().maxInFlight());
      assertEquals(9, payments.orElseThrow().maxRate());
      assertEquals("operator", payments.orElseThrow().source());
    }
  }
}

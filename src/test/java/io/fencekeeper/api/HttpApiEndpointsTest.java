package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every endpoint of docs/design.md, "HTTP API" over real HTTP against a running node. */
class HttpApiEndpointsTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void createIsIdempotentAndAParameterMismatchIsAConflict() {
    String job = ApiTestNode.newJob("create");
    String runId = api.createRun(job, 2);
    String same =
        "{\"job\":\""
            + job
            + "\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
            + ApiTestNode.DEADLINE
            + "\",\"maxAttempts\":5,\"maxFailedItems\":10,\"scope\":{\"type\":\"inline\",\"accounts\":["
            + "{\"accountId\":\"a-1\",\"cursor\":\"c-1\"},{\"accountId\":\"a-2\",\"cursor\":\"c-1\"}]}}";
    ApiTestNode.Answer again = api.post("/api/runs", same);
    assertEquals(200, again.status(), again.body());
    assertEquals(runId, again.tree().path("runId").asText());
    assertEquals(2, again.tree().path("counts").path("total").asInt());
    assertTrue(again.tree().has("governor"));

    ApiTestNode.Answer conflict =
        api.post("/api/runs", same.replace("\"maxAttempts\":5", "\"maxAttempts\":6"));
    assertEquals(409, conflict.status(), conflict.body());
    assertEquals("run_conflict", conflict.error());
  }

  @Test
  void runsAreListedAndReadByTheirEncodedId() {
    String runId = api.createRun(ApiTestNode.newJob("list"), 1);
    ApiTestNode.Answer list = api.get("/api/runs");
    assertEquals(200, list.status());
    List<String> ids = new ArrayList<>();
    list.tree().path("runs").forEach(run -> ids.add(run.path("runId").asText()));
    assertTrue(ids.contains(runId), ids.toString());

    ApiTestNode.Answer one = api.get("/api/runs/" + seg(runId));
    assertEquals(200, one.status(), one.body());
    assertEquals("RUNNING", one.tree().path("state").asText());
    assertEquals(ApiTestNode.DEADLINE, one.tree().path("deadline").asText());

    assertEquals(404, api.get("/api/runs/" + seg("nosuch/2026-11-29")).status());
  }

  @Test
  void anItemIdWithSlashesIsDecodedAsOneSegment() {
    String runId = api.createRun(ApiTestNode.newJob("segment"), 1);
    String itemId = ApiTestNode.itemId(runId, 1);
    // the literal form of the issue: %2F inside one segment
    String encoded = itemId.replace("/", "%2F");
    ApiTestNode.Answer item = api.get("/api/items/" + encoded);
    assertEquals(200, item.status(), item.body());
    assertEquals(itemId, item.tree().path("itemId").asText());
    assertEquals("PENDING", item.tree().path("status").asText());
    // unencoded slashes are other paths, not this item
    assertEquals(404, api.get("/api/items/" + itemId).status());
  }

  @Test
  void theLeaseCommandsRunAnItemToDoneAndTheAuditShowsEveryStep() {
    String runId = api.createRun(ApiTestNode.newJob("lease"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    ApiTestNode.Answer claim =
        api.post(item + "/claim", "{\"workerId\":\"w-1\",\"leaseMillis\":30000}");
    assertEquals(200, claim.status(), claim.body());
    long token = claim.tree().path("token").asLong();
    assertEquals("NONE", claim.tree().path("effect").asText());
    assertEquals("a-1", claim.tree().path("accountId").asText());
    assertTrue(claim.tree().path("idempotencyKey").asText().startsWith("fk-"));

    ApiTestNode.Answer held =
        api.post(item + "/claim", "{\"workerId\":\"w-2\",\"leaseMillis\":30000}");
    assertEquals(409, held.status());
    assertEquals("lease_held", held.error());
    assertEquals("w-1", held.tree().path("owner").asText());

    assertEquals(
        200,
        api.post(
                item + "/renew",
                "{\"workerId\":\"w-1\",\"token\":" + token + ",\"leaseMillis\":60000}")
            .status());
    ApiTestNode.Answer early =
        api.post(item + "/complete", "{\"workerId\":\"w-1\",\"token\":" + token + "}");
    assertEquals(422, early.status(), early.body());
    assertEquals("token", early.tree().path("field").asText());
    assertEquals(
        200,
        api.post(
                item + "/effect",
                "{\"workerId\":\"w-1\",\"token\":"
                    + token
                    + ",\"outcome\":{\"kind\":\"APPLIED\",\"providerReference\":\"p-1\"}}")
            .status());
    ApiTestNode.Answer done =
        api.post(item + "/complete", "{\"workerId\":\"w-1\",\"token\":" + token + "}");
    assertEquals(200, done.status(), done.body());
    assertEquals("DONE", done.tree().path("status").asText());

    ApiTestNode.Answer audit = api.get(item + "/audit");
    assertEquals(200, audit.status(), audit.body());
    List<String> types = new ArrayList<>();
    for (JsonNode event : audit.tree().path("events")) {
      types.add(event.path("type").asText());
      assertTrue(event.path("sequenceNr").asLong() > 0);
      assertFalse(event.path("at").asText().isEmpty());
    }
    assertEquals(List.of("LeaseGranted", "LeaseRenewed", "EffectRecorded", "ItemCompleted"), types);
    assertEquals(
        "w-1", audit.tree().path("events").get(0).path("fields").path("workerId").asText());
  }

  @Test
  void ambiguousFailReleaseAndRetryFollowTheItemRules() {
    String runId = api.createRun(ApiTestNode.newJob("fail"), 2);
    String first = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    long token =
        api.post(first + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":30000}")
            .tree()
            .path("token")
            .asLong();
    assertEquals(
        200,
        api.post(
                first + "/ambiguous",
                "{\"workerId\":\"w\",\"token\":" + token + ",\"reason\":\"timeout after send\"}")
            .status());
    ApiTestNode.Answer failed =
        api.post(
            first + "/fail",
            "{\"workerId\":\"w\",\"token\":"
                + token
                + ",\"error\":\"account closed\",\"retryable\":false}");
    assertEquals(200, failed.status(), failed.body());
    assertEquals("FAILED", failed.tree().path("status").asText());
    ApiTestNode.Answer retried = api.post(first + "/retry", null);
    assertEquals(200, retried.status(), retried.body());
    assertEquals("PENDING", retried.tree().path("status").asText());
    ApiTestNode.Answer notFailed = api.post(first + "/retry", null);
    assertEquals(422, notFailed.status());

    String second = "/api/items/" + seg(ApiTestNode.itemId(runId, 2));
    long t2 =
        api.post(second + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":30000}")
            .tree()
            .path("token")
            .asLong();
    ApiTestNode.Answer released =
        api.post(second + "/release", "{\"workerId\":\"w\",\"token\":" + t2 + "}");
    assertEquals("PENDING", released.tree().path("status").asText());
  }

  @Test
  void itemsArePagedWithAStatusFilterAndACursor() {
    String runId = api.createRun(ApiTestNode.newJob("pages"), 5);
    String items = "/api/runs/" + seg(runId) + "/items";
    ApiTestNode.Answer firstPage = api.get(items + "?limit=2");
    assertEquals(200, firstPage.status(), firstPage.body());
    assertEquals(2, firstPage.tree().path("items").size());
    String next = firstPage.tree().path("nextAfter").asText();
    ApiTestNode.Answer rest = api.get(items + "?limit=10&after=" + next);
    assertEquals(3, rest.tree().path("items").size(), rest.body());
    assertTrue(rest.tree().path("nextAfter").isNull());

    api.post(
        "/api/items/" + seg(ApiTestNode.itemId(runId, 4)) + "/claim",
        "{\"workerId\":\"w\",\"leaseMillis\":30000}");
    ApiTestNode.Answer leased = api.get(items + "?status=leased");
    assertEquals(1, leased.tree().path("items").size(), leased.body());
    assertEquals(
        ApiTestNode.itemId(runId, 4),
        leased.tree().path("items").get(0).path("item").path("itemId").asText());
  }

  /**
   * claim-next hands out each item once; then, with both leased, it says nothing is ready (429 with
   * Retry-After), and once both are DONE that the run is drained (204) or has ended (409).
   */
  @Test
  void claimNextHandsOutEachItemOnceThenSaysWhyNothingIsLeft() {
    String runId = api.createRun(ApiTestNode.newJob("next"), 2);
    String path = "/api/runs/" + seg(runId) + "/claim-next";
    String body = "{\"workerId\":\"ext-1\",\"leaseMillis\":30000}";
    ApiTestNode.Answer first =
        ApiTestNode.await(
            () -> api.post(path, body),
            a -> a.status() == 200,
            Duration.ofSeconds(20),
            "a first claim-next");
    ApiTestNode.Answer second =
        ApiTestNode.await(
            () -> api.post(path, body),
            a -> a.status() == 200,
            Duration.ofSeconds(20),
            "a second claim-next");
    assertFalse(first.tree().path("itemId").asText().equals(second.tree().path("itemId").asText()));
    assertEquals(runId, first.tree().path("runId").asText());
    ApiTestNode.Answer leased = api.post(path, body);
    assertEquals(429, leased.status(), leased.body());
    assertEquals("nothing_ready", leased.error());
    assertTrue(leased.headers().firstValue("Retry-After").isPresent(), "Retry-After");
    for (ApiTestNode.Answer claim : List.of(first, second)) {
      String item = "/api/items/" + seg(claim.tree().path("itemId").asText());
      ApiTestNode.Answer done =
          api.post(
              item + "/complete",
              "{\"workerId\":\"ext-1\",\"token\":"
                  + claim.tree().path("token").asLong()
                  + ",\"outcome\":{\"kind\":\"APPLIED\",\"providerReference\":\"e-1\"}}");
      assertEquals(200, done.status(), done.body());
      assertEquals("DONE", done.tree().path("status").asText());
    }
    ApiTestNode.Answer drained =
        ApiTestNode.await(
            () -> api.post(path, body),
            a -> a.status() == 204 || a.status() == 409,
            Duration.ofSeconds(20),
            "drained (204) or ended (409)");
    if (drained.status() == 409) {
      assertEquals("run_ended", drained.error(), drained.body());
    }
  }

  @Test
  void governorCapsAreReadAndSet() {
    ApiTestNode.Answer now = api.get("/api/governor");
    assertEquals(200, now.status());
    assertEquals(16, now.tree().path("normalCap").asInt(), now.body());
    assertTrue(now.tree().path("runs").isObject(), "each running run's decision: " + now.body());
    ApiTestNode.Answer set =
        api.send(
            HttpRequest.newBuilder(URI.create(api.base + "/api/governor"))
                .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                .header("Content-Type", "application/json")
                .PUT(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"normalCap\":4,\"burstCap\":12,\"minCap\":2}")),
            null);
    assertEquals(200, set.status(), set.body());
    assertEquals(12, api.get("/api/governor").tree().path("burstCap").asInt());
    ApiTestNode.Answer inverted =
        api.send(
            HttpRequest.newBuilder(URI.create(api.base + "/api/governor"))
                .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                .header("Content-Type", "application/json")
                .PUT(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"normalCap\":20,\"burstCap\":12,\"minCap\":2}")),
            null);
    assertEquals(422, inverted.status());
    assertEquals(12, api.get("/api/governor").tree().path("burstCap").asInt());
  }

  @Test
  void theOpenApiDocumentIsServed() {
    ApiTestNode.Answer yaml = api.get("/api/openapi.yaml");
    assertEquals(200, yaml.status());
    assertTrue(yaml.body().startsWith("openapi: 3"));
    assertTrue(yaml.headers().firstValue("Content-Type").orElse("").startsWith("application/yaml"));
  }
}

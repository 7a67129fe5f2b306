package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.api.stream.RunEventStreamsTest;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 25, item 3: every API answer, whatever its kind (JSON, the OpenAPI document, metrics, a
 * report, an event stream, every error), says {@code Cache-Control: no-store} (or its own stricter
 * value) and {@code X-Content-Type-Options: nosniff}.
 */
class ApiAnswerHeadersTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void everyKindOfAnswerForbidsCachingAndSniffing() {
    String runId = api.createRun(ApiTestNode.newJob("headers"), 1);
    String run = "/api/runs/" + seg(runId);
    Map<String, ApiTestNode.Answer> answers = new LinkedHashMap<>();
    answers.put("json 200", api.get("/api/runs"));
    answers.put("one run", api.get(run));
    answers.put("openapi.yaml", api.get("/api/openapi.yaml"));
    answers.put("metrics", api.get("/metrics"));
    answers.put("report", api.get(run + "/report?format=jsonl"));
    answers.put("404", api.get("/api/no-such-thing"));
    answers.put("400", api.get(run + "/items?limit=0"));
    answers.put("401", api.getAs("/api/runs", null));
    answers.put("401 bad token", api.getAs("/api/runs", "not-the-token-0123456789"));
    answers.put(
        "405",
        api.send(
            HttpRequest.newBuilder(URI.create(api.base + "/api/runs"))
                .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                .DELETE(),
            null));
    answers.put(
        "415",
        api.send(
            HttpRequest.newBuilder(URI.create(api.base + run + "/cancel"))
                .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString("x=1")),
            null));
    answers.put(
        "422",
        api.post("/api/runs/" + seg(runId) + "/resume", "{\"deadline\":\"2020-01-01T00:00:00Z\"}"));
    answers.put("413", api.post(run + "/cancel", "{\"x\":\"" + "y".repeat(70 * 1024) + "\"}"));
    answers.put(
        "409",
        api.post(
            "/api/runs",
            "{\"job\":\""
                + runId.split("/")[0]
                + "\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
                + ApiTestNode.DEADLINE
                + "\",\"scope\":{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"other\",\"cursor\":\"c\"}]}}"));
    answers.forEach(
        (what, answer) -> {
          String cache = answer.headers().firstValue("Cache-Control").orElse("(none)");
          assertTrue(cache.contains("no-store"), what + " Cache-Control: " + cache);
          assertEquals(
              "nosniff",
              answer.headers().firstValue("X-Content-Type-Options").orElse("(none)"),
              what);
        });
    assertEquals(404, answers.get("404").status());
    assertEquals(401, answers.get("401").status());
    assertEquals(405, answers.get("405").status());
    assertEquals(415, answers.get("415").status());
    assertEquals(413, answers.get("413").status());
    assertEquals(409, answers.get("409").status(), answers.get("409").body());
  }

  @Test
  void anEventStreamKeepsItsOwnNoStoreAndIsNotSniffed() throws Exception {
    try (RunEventStreamsTest.EventReader stream =
        RunEventStreamsTest.open(api, "/api/events/runs")) {
      assertEquals(200, stream.response.statusCode());
      assertEquals(
          "no-cache, no-store", stream.response.headers().firstValue("Cache-Control").orElse(""));
      assertEquals(
          "nosniff", stream.response.headers().firstValue("X-Content-Type-Options").orElse(""));
    }
  }
}

package io.fencekeeper.api.runs;

import static io.fencekeeper.api.ApiRefusals.assertRefused;
import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.ApiTestNode;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.verify.VerifyFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What {@link VerifyEndpoints} decides, over real HTTP: which start fields it takes and their
 * bounds, that the same request joins a running verification and another is refused, how a path
 * names a verification, the list's order, and the findings' download (its format, file name and
 * headers). The refusals {@code VerifyApiTest} already makes (tokens, an unknown run, a zero
 * sample, a seed without a sample, a run not ended) are not made again. One node with workers and
 * the simulated provider over HTTP; every test verifies runs of its own.
 */
class VerifyEndpointsTest {

  private static final String TOKEN = "verify-endpoints-token-0123456789";
  private static final String HOSTILE = "<script>alert(1)</script>";
  private static final ObjectMapper JSON = ApiJson.mapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static VerifyFixture f;
  private static String base;

  @BeforeAll
  static void start() throws Exception {
    f = new VerifyFixture(TestDatabases::h2File, 37);
    f.startNode(2, Map.of());
    base = f.startApi(TOKEN, new ApiMetrics());
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static ApiTestNode.Answer get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  private static ApiTestNode.Answer post(String path, String body) {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body)));
  }

  private static ApiTestNode.Answer send(HttpRequest.Builder request) {
    return ApiTestNode.exchange(HTTP, request.header("Authorization", "Bearer " + TOKEN), JSON);
  }

  /** A run of {@code items} items that ended; its path. */
  private static String endedRun(String job, int items) throws Exception {
    String runId = f.create(job, VerifyFixture.accounts(items)).runId();
    f.awaitEnded(runId);
    return "/api/runs/" + seg(runId);
  }

  private static JsonNode awaitEnded(String run, int number) {
    return Await.until(
            VerifyFixture.WAIT,
            "verification " + number + " of " + run + " to end",
            () -> get(run + "/verifications/" + number),
            answer ->
                answer.status() == 200 && !answer.tree().path("verdict").asText().equals("RUNNING"))
        .tree();
  }

  private static List<Integer> numbers(String run) {
    ApiTestNode.Answer listed = get(run + "/verifications");
    assertEquals(200, listed.status(), listed.body());
    List<Integer> numbers = new ArrayList<>();
    listed.tree().path("verifications").forEach(v -> numbers.add(v.path("number").asInt()));
    return numbers;
  }

  @Test
  void aStartTakesOnlyASampleAndASeedAJavaScriptNumberCanHold() throws Exception {
    String run = endedRun("verify-bounds", 3);

    assertRefused(post(run + "/verify", "{\"sample\":1,\"seed\":9007199254740992}"), 400, "seed");
    assertRefused(post(run + "/verify", "{\"sample\":2147483648}"), 400, "sample");
    assertRefused(post(run + "/verify", "{\"sample\":1,\"rows\":\"all\"}"), 400, "rows");
    assertRefused(post(run + "/verify", "{\"" + HOSTILE + "\":1}"), 400, null, HOSTILE);
    assertEquals(List.of(), numbers(run), "nothing was started");

    ApiTestNode.Answer sampled = post(run + "/verify", "{\"sample\":2,\"seed\":9007199254740991}");
    assertEquals(202, sampled.status(), sampled.body());
    assertEquals(9007199254740991L, sampled.tree().path("seed").asLong(), "stated exactly");
    assertEquals(2, sampled.tree().path("toCheck").asLong());
    assertEquals(2, awaitEnded(run, 1).path("checked").asLong());
    ApiTestNode.Answer whole = post(run + "/verify", "{}");
    assertEquals(202, whole.status(), whole.body());
    assertEquals(3, whole.tree().path("toCheck").asLong(), "an empty body: every item");
    awaitEnded(run, 2);

    assertEquals(List.of(2, 1), numbers(run), "newest first");
    assertEquals(2, get(run + "/verifications/latest").tree().path("number").asInt());
  }

  @Test
  void theSameRequestJoinsTheRunningVerificationAndAnotherIsRefused() throws Exception {
    String run = endedRun("verify-running", 3);
    // every lookup waits: the verification is still running while the next requests come
    f.sim.setFaults(SimFaults.NONE.withLatency(4000, 0));
    ApiTestNode.Answer started;
    ApiTestNode.Answer same;
    ApiTestNode.Answer other;
    ApiTestNode.Answer whole;
    try {
      started = post(run + "/verify", "{\"sample\":2,\"seed\":5}");
      same = post(run + "/verify", "{\"sample\":2,\"seed\":5}");
      other = post(run + "/verify", "{\"sample\":3,\"seed\":5}");
      whole = post(run + "/verify", null);
    } finally {
      f.sim.setFaults(SimFaults.NONE);
    }

    assertEquals(202, started.status(), started.body());
    assertEquals(200, same.status(), "joined: " + same.body());
    assertEquals(1, same.tree().path("number").asInt());
    for (ApiTestNode.Answer refused : List.of(other, whole)) {
      JsonNode body = assertRefused(refused, 409, null);
      assertEquals("verification_running", body.path("error").asText());
    }
    assertEquals("AGREE", awaitEnded(run, 1).path("verdict").asText());
    assertEquals(List.of(1), numbers(run), "one verification, joined once");
  }

  @Test
  void aPathNamesAVerificationByItsNumberOrLatestAndNothingElse() throws Exception {
    String run = endedRun("verify-numbers", 1);
    assertEquals(202, post(run + "/verify", null).status());
    awaitEnded(run, 1);
    String unknownRun = "/api/runs/" + seg("nobody/2026-11-29");

    for (String number : List.of("LATEST", "-1", "1.5", "99999999999", seg(HOSTILE))) {
      assertRefused(get(run + "/verifications/" + number), 400, "number", HOSTILE);
    }
    assertRefused(get(unknownRun + "/verifications/x"), 400, "number");
    JsonNode missing = assertRefused(get(run + "/verifications/2"), 404, null);
    assertEquals("unknown_verification", missing.path("error").asText());
    assertTrue(missing.path("message").asText().contains("no verification 2"), missing.toString());
    assertEquals(
        "unknown_run",
        assertRefused(get(unknownRun + "/verifications/1"), 404, null).path("error").asText());
    assertEquals(
        "unknown_run",
        assertRefused(get(unknownRun + "/verifications"), 404, null).path("error").asText());
    assertRefused(get("/api/runs/" + seg(HOSTILE) + "/verifications"), 400, "runId", HOSTILE);
    assertEquals(1, get(run + "/verifications/latest").tree().path("number").asInt());
  }

  @Test
  void findingsAreAFileNamedForTheRunInTheFormatAskedFor() throws Exception {
    String run = endedRun("verify-files", 2);
    assertEquals(202, post(run + "/verify", null).status());
    awaitEnded(run, 1);
    String findings = run + "/verifications/1/findings";

    ApiTestNode.Answer csv = get(findings);
    ApiTestNode.Answer jsonl = get(findings + "?format=JSONL");

    assertEquals(200, csv.status(), csv.body());
    assertEquals(
        String.join(",", VerifyEndpoints.COLUMNS) + "\r\n", csv.body(), "csv unless asked");
    assertEquals("text/csv; charset=UTF-8", csv.headers().firstValue("Content-Type").orElse(""));
    assertEquals(
        "attachment; filename=\"verify-files-2026-11-29-verification-1.csv\"",
        csv.headers().firstValue("Content-Disposition").orElse(""));
    assertEquals("no-store", csv.headers().firstValue("Cache-Control").orElse(""));
    assertEquals(200, jsonl.status(), jsonl.body());
    assertEquals("", jsonl.body(), "an agreeing run has no findings, and JSON lines no header");
    assertEquals("application/x-ndjson", jsonl.headers().firstValue("Content-Type").orElse(""));
    assertEquals(
        "attachment; filename=\"verify-files-2026-11-29-verification-1.jsonl\"",
        jsonl.headers().firstValue("Content-Disposition").orElse(""));

    assertRefused(get(findings + "?format=xml"), 400, "format");
    assertRefused(get(findings + "?format=csv&limit=5"), 400, "limit");
    assertRefused(
        get(findings + "?%3Cscript%3Ex%3C%2Fscript%3E=1"), 400, "(not shown)", "<script>");
    assertRefused(get(run + "/verifications/0/findings"), 400, "number");
  }
}

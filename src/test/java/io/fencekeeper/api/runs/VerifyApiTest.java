package io.fencekeeper.api.runs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.verify.VerifyFixture;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Verifying a run over the HTTP API as an operator and as an attacker: start it (admin token),
 * follow it, read its findings and export them as CSV and JSON lines; every refusal a clear 4xx
 * naming what was wrong, changing nothing. One node with workers and the simulated provider over
 * HTTP; every test makes runs of its own.
 */
class VerifyApiTest {

  static final String TOKEN = "verify-admin-token-0123456789";
  static final String READ_TOKEN = "verify-read-token-0123456789";
  static final ObjectMapper JSON = ApiJson.mapper();
  static final HttpClient HTTP = HttpClient.newHttpClient();

  static VerifyFixture f;
  static String base;
  static ApiMetrics metrics = new ApiMetrics();

  @BeforeAll
  static void start() throws Exception {
    f = new VerifyFixture(TestDatabases::h2File, 21);
    f.startNode(4, Map.of("fencekeeper.http.api-read-token", READ_TOKEN));
    base = f.startApi(TOKEN, metrics);
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  record Answer(int status, String body) {
    JsonNode tree() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException("not JSON: " + body, e);
      }
    }
  }

  static Answer send(String method, String path, String body, String token) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    if (method.equals("POST")) {
      request
          .header("Content-Type", "application/json")
          .POST(
              body == null
                  ? HttpRequest.BodyPublishers.noBody()
                  : HttpRequest.BodyPublishers.ofString(body));
    }
    try {
      HttpResponse<String> response =
          HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
      return new Answer(response.statusCode(), response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static String seg(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  static RunView finishedRun(String job, int items) throws Exception {
    RunView run = f.create(job, VerifyFixture.accounts(items));
    return f.awaitEnded(run.runId());
  }

  static JsonNode awaitVerdict(String runId, int number) {
    return Await.until(
            VerifyFixture.WAIT,
            "verification " + number + " of " + runId + " to end",
            () -> send("GET", "/api/runs/" + seg(runId) + "/verifications/" + number, null, TOKEN),
            answer ->
                answer.status() == 200 && !answer.tree().path("verdict").asText().equals("RUNNING"))
        .tree();
  }

  /** The first item of the run whose outcome is of {@code kind}. */
  static ItemId itemOf(String job, int items, WorkItem.OutcomeKind kind) {
    for (AccountCursor account : VerifyFixture.accounts(items)) {
      ItemId id = ItemId.of(job, VerifyFixture.DATE, account.accountId(), account.cursor());
      var reply = f.node.items().get(id).toCompletableFuture().join();
      if (((WorkItem.Accepted) reply).item().effectOutcome().kind() == kind) {
        return id;
      }
    }
    throw new IllegalStateException("no item with outcome " + kind);
  }

  @Test
  void anOperatorVerifiesARunFollowsItAndExportsEveryFinding() throws Exception {
    RunView run = finishedRun("api-verify", 60);
    ItemId lost = itemOf("api-verify", 60, WorkItem.OutcomeKind.APPLIED);
    ItemId foreign = itemOf("api-verify", 60, WorkItem.OutcomeKind.NOTHING_TO_DO);
    f.sim.loseEffect(lost.idempotencyKey());
    f.sim.writeForeignEffect(foreign.idempotencyKey());
    String path = "/api/runs/" + seg(run.runId());

    Answer started = send("POST", path + "/verify", null, TOKEN);

    assertEquals(202, started.status(), started.body());
    assertEquals(1, started.tree().path("number").asInt());
    assertEquals(60, started.tree().path("toCheck").asLong());
    JsonNode done = awaitVerdict(run.runId(), 1);
    assertEquals("DISCREPANCIES", done.path("verdict").asText());
    assertEquals("COMPLETED", done.path("status").asText());
    assertEquals(60, done.path("checked").asLong());
    assertEquals(2, done.path("discrepancies").asLong());
    assertEquals(1, done.path("tally").path("missing").asLong());
    assertEquals(1, done.path("tally").path("unexpectedEffect").asLong());
    List<String> kinds = new ArrayList<>();
    done.path("findings").forEach(finding -> kinds.add(finding.path("outcome").asText()));
    assertEquals(2, kinds.size());
    assertTrue(kinds.containsAll(List.of("MISSING", "UNEXPECTED_EFFECT")), kinds.toString());
    JsonNode first = done.path("findings").get(0);
    assertTrue(
        List.of("FOUND", "NOT_FOUND").contains(first.path("providerAnswer").asText()),
        first.toString());

    Answer csv = send("GET", path + "/verifications/1/findings?format=csv", null, TOKEN);
    Answer jsonl = send("GET", path + "/verifications/latest/findings?format=jsonl", null, TOKEN);

    assertEquals(200, csv.status());
    String[] rows = csv.body().split("\r\n");
    assertEquals(String.join(",", VerifyEndpoints.COLUMNS), rows[0]);
    assertEquals(3, rows.length, csv.body());
    assertTrue(csv.body().contains(lost.value() + "," + lost.idempotencyKey() + ",MISSING,DONE"));
    assertTrue(
        csv.body()
            .contains(foreign.value() + "," + foreign.idempotencyKey() + ",UNEXPECTED_EFFECT"));
    String[] lines = jsonl.body().split("\n");
    assertEquals(2, lines.length);
    for (String line : lines) {
      JsonNode finding = JSON.readTree(line);
      assertEquals(
          finding.path("itemId").asText().equals(lost.value()) ? "NOT_FOUND" : "FOUND",
          finding.path("providerAnswer").asText());
    }
    JsonNode listed = send("GET", path + "/verifications", null, READ_TOKEN).tree();
    assertEquals(1, listed.path("verifications").size());
    assertEquals(0, listed.path("verifications").get(0).path("findings").size());
    String scraped = send("GET", "/metrics", null, TOKEN).body();
    assertTrue(
        scraped.contains(
            "fencekeeper_verification_items{outcome=\"missing\",run=\"" + run.runId() + "\"} 1.0"),
        scraped);
    assertTrue(
        scraped.contains("fencekeeper_verification_running{run=\"" + run.runId() + "\"} 0.0"));
  }

  @Test
  void aSampleStatesItsSeedAndTheSameRequestJoinsTheRunningOne() throws Exception {
    RunView run = finishedRun("api-sample", 30);
    String path = "/api/runs/" + seg(run.runId());

    Answer sampled = send("POST", path + "/verify", "{\"sample\": 7}", TOKEN);

    assertEquals(202, sampled.status(), sampled.body());
    long seed = sampled.tree().path("seed").asLong();
    assertTrue(seed > 0, "a seed was chosen and stated");
    assertEquals(7, sampled.tree().path("toCheck").asLong());
    JsonNode done = awaitVerdict(run.runId(), 1);
    assertEquals("AGREE", done.path("verdict").asText());
    assertEquals(7, done.path("checked").asLong());
    assertEquals(seed, done.path("seed").asLong());
    Answer again = send("POST", path + "/verify", "{\"sample\": 7, \"seed\": " + seed + "}", TOKEN);
    assertEquals(202, again.status(), "an ended verification is not joined: a new one");
    assertEquals(2, again.tree().path("number").asInt());
  }

  @Test
  void refusalsNameWhatWasWrongAndStartNothing() throws Exception {
    RunView run = finishedRun("api-refused", 3);
    String path = "/api/runs/" + seg(run.runId());
    String hostile = "<script>alert(1)</script>";

    assertEquals(401, send("POST", path + "/verify", null, null).status());
    assertEquals(403, send("POST", path + "/verify", null, READ_TOKEN).status());
    Answer unknown = send("POST", "/api/runs/" + seg("nobody/2026-11-29") + "/verify", null, TOKEN);
    assertEquals(404, unknown.status());
    assertEquals("unknown_run", unknown.tree().path("error").asText());
    Answer badId = send("POST", "/api/runs/" + seg(hostile) + "/verify", null, TOKEN);
    assertEquals(400, badId.status());
    assertEquals("runId", badId.tree().path("field").asText());
    Map<String, String> badBodies =
        Map.of(
            "{\"sample\": 0}",
            "sample",
            "{\"sample\": \"" + hostile + "\"}",
            "sample",
            "{\"sample\": 5, \"seed\": -1}",
            "seed",
            "{\"seed\": 5}",
            "seed");
    for (Map.Entry<String, String> bad : badBodies.entrySet()) {
      Answer refused = send("POST", path + "/verify", bad.getKey(), TOKEN);
      assertEquals(400, refused.status(), bad.getKey() + ": " + refused.body());
      assertEquals(bad.getValue(), refused.tree().path("field").asText(), refused.body());
      assertFalse(refused.body().contains("<script>"), refused.body());
      assertFalse(refused.body().contains("Exception"), refused.body());
    }
    assertEquals(400, send("POST", path + "/verify", "[1, 2", TOKEN).status());
    Answer badNumber = send("GET", path + "/verifications/" + seg(hostile), null, TOKEN);
    assertEquals(400, badNumber.status());
    assertEquals("number", badNumber.tree().path("field").asText());
    assertFalse(badNumber.body().contains("<script>"), badNumber.body());
    assertEquals(400, send("GET", path + "/verifications/0", null, TOKEN).status());
    assertEquals(
        "unknown_verification",
        send("GET", path + "/verifications/latest", null, TOKEN).tree().path("error").asText());
    assertEquals(404, send("GET", path + "/verifications/9/findings", null, TOKEN).status());
    Answer badFormat =
        send("GET", path + "/verifications/1/findings?format=" + seg(hostile), null, TOKEN);
    assertEquals(400, badFormat.status());
    assertFalse(badFormat.body().contains("<script>"), badFormat.body());
    assertEquals(
        0,
        send("GET", path + "/verifications", null, TOKEN).tree().path("verifications").size(),
        "nothing was started");

    f.sim.setFaults(SimFaults.NONE.withLatency(3000, 0)); // its one plan keeps it RUNNING
    try {
      RunView running = f.create("api-running", VerifyFixture.accounts(1));
      Answer notEnded = send("POST", "/api/runs/" + seg(running.runId()) + "/verify", "{}", TOKEN);
      assertEquals(409, notEnded.status(), notEnded.body());
      assertEquals("run_not_ended", notEnded.tree().path("error").asText());
      assertTrue(notEnded.tree().path("message").asText().contains("RUNNING"));
    } finally {
      f.sim.setFaults(SimFaults.NONE);
    }
  }

  @Test
  void aVerificationThatCannotLookUpEndsIncompleteWithTheReason() throws Exception {
    RunView run = finishedRun("api-refused-lookups", 5);
    String path = "/api/runs/" + seg(run.runId());
    JsonNode ended;
    f.refuseLookups();
    try {
      assertEquals(202, send("POST", path + "/verify", null, TOKEN).status());
      ended = awaitVerdict(run.runId(), 1);
    } finally {
      f.acceptLookups();
    }

    assertEquals("INCOMPLETE", ended.path("verdict").asText());
    assertEquals("FAILED", ended.path("status").asText());
    assertTrue(ended.path("reason").asText().contains("refused"), ended.toString());
  }
}

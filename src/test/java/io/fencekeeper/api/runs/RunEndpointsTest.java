package io.fencekeeper.api.runs;

import static io.fencekeeper.api.ApiRefusals.assertRefused;
import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.ApiTestNode;
import io.fencekeeper.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What {@link RunEndpoints} decides, over real HTTP: a create's defaults and bounds, the run list's
 * filters and pages, which fields resume and cancel take and what they answer, the item pages'
 * sizes, and what claim-next counts. The refusals an existing test already makes (bad ids, a past
 * deadline, a conflict, staging, uploads) are not made again.
 */
class RunEndpointsTest {

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String HOSTILE = "<script>alert(1)</script>";
  private static final String ONE_ACCOUNT =
      "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"}]}";
  private final ApiTestNode api = ApiTestNode.get();

  /** A create of one account for {@code job} on {@code date}, with {@code more} fields as given. */
  private static String create(String job, String date, String more) {
    return ApiTestNode.createBody(job, date, ONE_ACCOUNT, more);
  }

  private void assertNotCreated(String job) {
    assertEquals(404, api.get("/api/runs/" + seg(job + "/2026-11-29")).status(), job);
  }

  private static List<String> runIds(ApiTestNode.Answer list) {
    assertEquals(200, list.status(), list.body());
    List<String> ids = new ArrayList<>();
    list.tree().path("runs").forEach(run -> ids.add(run.path("runId").asText()));
    return ids;
  }

  private JsonNode awaitState(String runId, String state) {
    return Await.until(
            WAIT,
            "run " + runId + " to be " + state,
            () -> api.get("/api/runs/" + seg(runId)),
            answer -> answer.tree().path("state").asText().equals(state))
        .tree();
  }

  @Test
  void aCreateWithoutTheOptionalParametersTakesTheirDefaults() {
    String job = ApiTestNode.newJob("defaults");

    ApiTestNode.Answer created = api.post("/api/runs", create(job, "2026-11-29", ""));

    assertEquals(201, created.status(), created.body());
    assertEquals(job + "/2026-11-29", created.tree().path("runId").asText());
    assertEquals(5, created.tree().path("maxAttempts").asInt(), created.body());
    assertEquals(0, created.tree().path("maxFailedItems").asInt(), created.body());
    assertEquals(1, created.tree().path("counts").path("total").asInt(), created.body());
  }

  @Test
  void eachCreateParameterOutOfItsBoundsIsRefusedNamingItAndCreatesNothing() {
    String job = ApiTestNode.newJob("bounds");
    Map<String, String> fieldOf =
        Map.of(
            ",\"maxAttempts\":0",
            "maxAttempts",
            ",\"maxAttempts\":101",
            "maxAttempts",
            ",\"maxAttempts\":2.5",
            "maxAttempts",
            ",\"maxFailedItems\":-1",
            "maxFailedItems",
            ",\"provider\":\"" + "p".repeat(64) + "\"",
            "provider",
            ",\"priority\":\"high\"",
            "priority");
    fieldOf.forEach(
        (more, field) -> {
          JsonNode refused =
              assertRefused(api.post("/api/runs", create(job, "2026-11-29", more)), 400, field);
          assertEquals("bad_request", refused.path("error").asText(), more);
        });
    assertRefused(api.post("/api/runs", create("j".repeat(129), "2026-11-29", "")), 400, "job");
    assertNotCreated(job);
  }

  @Test
  void aRequestTheRunRulesRefuseIs422WithItsProblemsAndNoEcho() {
    String job = ApiTestNode.newJob("rules");
    JsonNode badJob =
        assertRefused(
            api.post("/api/runs", create("a " + HOSTILE, "2026-11-29", "")), 422, null, HOSTILE);
    assertEquals("invalid_run", badJob.path("error").asText());
    assertTrue(badJob.path("problems").isArray(), badJob.toString());
    assertTrue(badJob.path("problems").get(0).asText().startsWith("job "), badJob.toString());

    JsonNode badProvider =
        assertRefused(
            api.post("/api/runs", create(job, "2026-11-29", ",\"provider\":\"No Such!\"")),
            422,
            null,
            "No Such!");
    assertEquals("invalid_run", badProvider.path("error").asText());
    JsonNode unknownProvider =
        assertRefused(
            api.post("/api/runs", create(job, "2026-11-29", ",\"provider\":\"nosuch\"")),
            422,
            "provider");
    assertTrue(
        unknownProvider.path("message").asText().contains("not configured"),
        unknownProvider.toString());
    assertNotCreated(job);
  }

  @Test
  void runsAreListedNewestFirstAPageAtATimeAndFilteredByJobStateAndDate() {
    String job = ApiTestNode.newJob("listed");
    for (String date : List.of("2026-11-27", "2026-11-28", "2026-11-29")) {
      assertEquals(201, api.post("/api/runs", create(job, date, "")).status());
      ApiTestNode.CLOCK.advance(Duration.ofSeconds(1)); // the next run is newer
    }
    String list = "/api/runs?job=" + job;

    ApiTestNode.Answer first = api.get(list + "&limit=2");
    String next = first.tree().path("next").asText();
    ApiTestNode.Answer rest = api.get(list + "&limit=2&cursor=" + seg(next));

    assertEquals(List.of(job + "/2026-11-29", job + "/2026-11-28"), runIds(first));
    assertFalse(next.isEmpty(), first.body());
    assertEquals(List.of(job + "/2026-11-27"), runIds(rest));
    assertTrue(rest.tree().path("next").isNull(), "the last page: " + rest.body());
    assertEquals(
        List.of(job + "/2026-11-28"), runIds(api.get(list + "&from=2026-11-28&to=2026-11-28")));
    assertEquals(
        List.of(job + "/2026-11-28", job + "/2026-11-27"),
        runIds(api.get(list + "&to=2026-11-28")));
    assertEquals(List.of(), runIds(api.get("/api/runs?job=" + job + "-other")));

    String oldest = job + "/2026-11-27";
    assertEquals(200, api.post("/api/runs/" + seg(oldest) + "/cancel", null).status());
    awaitState(oldest, "CANCELLED");
    assertEquals(List.of(oldest), runIds(api.get(list + "&state=cancelled")));
    assertEquals(
        List.of(job + "/2026-11-29", job + "/2026-11-28"),
        runIds(api.get(list + "&state=RUNNING")));
    assertEquals(3, runIds(api.get(list + "&state=" + seg("running, Cancelled"))).size());
  }

  @Test
  void everyBadListQueryIsRefusedNamingItsParameterWithoutItsValue() {
    Map<String, String> parameterOf =
        Map.ofEntries(
            Map.entry("state=" + seg(HOSTILE), "state"),
            Map.entry("state=running,", "state"),
            Map.entry("from=2026-02-30", "from"),
            Map.entry("to=" + seg(HOSTILE), "to"),
            Map.entry("from=2026-11-29&to=2026-11-28", "from"),
            Map.entry("limit=0", "limit"),
            Map.entry("limit=501", "limit"),
            Map.entry("limit=" + seg(HOSTILE), "limit"),
            Map.entry("cursor=" + seg(HOSTILE), "cursor"),
            Map.entry("cursor=" + "c".repeat(1025), "cursor"),
            Map.entry("job=" + "j".repeat(129), "job"),
            Map.entry("sort=asc", "sort"),
            // a parameter's name is the caller's too: not a plain identifier, it is not repeated
            Map.entry(seg(HOSTILE) + "=1", "(not shown)"));
    parameterOf.forEach(
        (query, parameter) -> {
          JsonNode refused =
              assertRefused(api.get("/api/runs?" + query), 400, parameter, HOSTILE, "ccccc");
          assertEquals("bad_request", refused.path("error").asText(), query);
        });
    assertEquals(200, api.get("/api/runs?limit=500").status(), "the largest page is allowed");
  }

  @Test
  void cancelAndResumeTakeOnlyTheirOwnFieldsAndAnswerTheRunOrWhyNot() {
    String runId = api.createRun(ApiTestNode.newJob("control"), 1);
    String run = "/api/runs/" + seg(runId);

    assertRefused(api.post(run + "/cancel", "{\"reason\":\"x\"}"), 400, "reason");
    assertRefused(api.post(run + "/resume", "{}"), 400, "deadline");
    assertRefused(
        api.post(run + "/resume", "{\"deadline\":\"2026-11-30T12:00:00Z\",\"force\":true}"),
        400,
        "force");
    assertEquals("RUNNING", api.get(run).tree().path("state").asText(), "nothing was changed");

    ApiTestNode.Answer cancelled = api.post(run + "/cancel", "{}");
    assertEquals(200, cancelled.status(), cancelled.body());
    assertEquals(runId, cancelled.tree().path("runId").asText(), "the run's view");
    awaitState(runId, "CANCELLED");
    JsonNode again = assertRefused(api.post(run + "/cancel", null), 409, null);
    assertEquals("run_ended", again.path("error").asText());

    ApiTestNode.Answer resumed =
        api.post(run + "/resume", "{\"deadline\":\"2026-11-30T12:00:00Z\"}");
    assertEquals(200, resumed.status(), resumed.body());
    assertEquals("2026-11-30T12:00:00Z", resumed.tree().path("deadline").asText(), resumed.body());
    assertEquals("2026-11-30T12:00:00Z", awaitState(runId, "RUNNING").path("deadline").asText());

    JsonNode unknown =
        assertRefused(
            api.post(
                "/api/runs/" + seg("nosuch/2026-11-29") + "/resume",
                "{\"deadline\":\"2026-11-30T12:00:00Z\"}"),
            404,
            null);
    assertEquals("unknown_run", unknown.path("error").asText());
    assertEquals(
        "unknown_run",
        assertRefused(api.get("/api/runs/" + seg("nosuch/2026-11-29")), 404, null)
            .path("error")
            .asText());
  }

  @Test
  void itemPagesHoldAHundredItemsUnlessAskedAndNeverMoreThanFiveHundred() {
    String runId = api.createRun(ApiTestNode.newJob("pages"), 101);
    String items = "/api/runs/" + seg(runId) + "/items";

    ApiTestNode.Answer first = api.get(items);
    ApiTestNode.Answer pending = api.get(items + "?status=PENDING");
    ApiTestNode.Answer whole = api.get(items + "?limit=500&status=");

    assertEquals(100, first.tree().path("items").size(), "the default page");
    assertFalse(first.tree().path("nextAfter").isNull(), first.body());
    assertEquals(runId, first.tree().path("runId").asText());
    assertEquals(
        100, pending.tree().path("items").size(), "a status in capitals: " + pending.body());
    assertEquals(101, whole.tree().path("items").size(), "an empty status: every item");
    assertTrue(whole.tree().path("nextAfter").isNull(), "nothing after the last item");
    assertRefused(api.get(items + "?limit=501"), 400, "limit");
  }

  @Test
  void claimNextTakesAWorkerAndALeaseAndCountsWhatItHandsOut() {
    String runId = api.createRun(ApiTestNode.newJob("claim-next"), 1);
    String path = "/api/runs/" + seg(runId) + "/claim-next";
    String body = "{\"workerId\":\"ext-1\",\"leaseMillis\":30000}";

    assertRefused(
        api.post(path, "{\"workerId\":\"ext-1\",\"leaseMillis\":30000,\"n\":2}"), 400, "n");
    assertRefused(api.post(path, "{\"leaseMillis\":30000}"), 400, "workerId");
    assertRefused(
        api.post(path, "{\"workerId\":\"ext-1\",\"leaseMillis\":3600001}"), 400, "leaseMillis");
    assertEquals(
        "PENDING",
        api.get("/api/items/" + seg(ApiTestNode.itemId(runId, 1))).tree().path("status").asText(),
        "nothing was claimed");

    double claimedBefore = claims("claimed");
    ApiTestNode.Answer claimed =
        Await.until(
            WAIT,
            "a claim-next to hand out the item",
            () -> api.post(path, body),
            a -> a.status() == 200);
    double claimedAfter = claims("claimed");
    double nothingBefore = claims("nothing_ready");
    ApiTestNode.Answer nothing = api.post(path, body);

    assertEquals(ApiTestNode.itemId(runId, 1), claimed.tree().path("itemId").asText());
    assertTrue(claimed.tree().path("token").asLong() > 0, claimed.body());
    assertEquals(429, nothing.status(), nothing.body());
    assertEquals("nothing_ready", nothing.error(), "its one item is leased");
    assertEquals(claimedBefore + 1, claimedAfter, "one item handed out, counted once");
    assertEquals(nothingBefore + 1, claims("nothing_ready"), "the 429 counted as nothing ready");
  }

  /** The node's count of claim-next answers with {@code outcome}, from its /metrics. */
  private double claims(String outcome) {
    ApiTestNode.Answer scraped = api.get("/metrics");
    assertEquals(200, scraped.status());
    for (String line : scraped.body().split("\n")) {
      if (line.startsWith("fencekeeper_claims_total{")
          && line.contains("source=\"api-next\"")
          && line.contains("outcome=\"" + outcome + "\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }
}

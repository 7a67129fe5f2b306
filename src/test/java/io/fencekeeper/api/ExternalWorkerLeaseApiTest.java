package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 51: the lease API as an external worker uses it (docs/external-workers.md): a claim
 * repeated with its request id is the same lease, the claim answer says what the worker needs, the
 * last step is one call, every command after {@code ambiguous} has one defined answer, a worker
 * heard elsewhere is not a lost holder, and claim-next says why it hands nothing out.
 */
class ExternalWorkerLeaseApiTest {

  private final ApiTestNode api = ApiTestNode.get();

  private String item(String runId, int account) {
    return "/api/items/" + seg(ApiTestNode.itemId(runId, account));
  }

  private static String claimBody(String worker, String requestId, long leaseMillis) {
    return "{\"workerId\":\""
        + worker
        + "\",\"leaseMillis\":"
        + leaseMillis
        + (requestId == null ? "" : ",\"requestId\":\"" + requestId + "\"")
        + "}";
  }

  private static String as(String worker, long token, String more) {
    return "{\"workerId\":\"" + worker + "\",\"token\":" + token + more + "}";
  }

  private static final String APPLIED =
      ",\"outcome\":{\"kind\":\"APPLIED\",\"providerReference\":\"eff-1\"}";

  @Test
  void theClaimAnswerSaysEverythingTheWorkerNeeds() {
    String runId = api.createRun(ApiTestNode.newJob("answer"), 1);
    ApiTestNode.Answer claimed =
        api.post(item(runId, 1) + "/claim", claimBody("ext-1", "r-1", 20_000));
    assertEquals(200, claimed.status(), claimed.body());
    JsonNode c = claimed.tree();
    assertEquals(ApiTestNode.itemId(runId, 1), c.path("itemId").asText());
    assertFalse(c.path("idempotencyKey").asText().isEmpty());
    assertTrue(c.path("token").asLong() > 0);
    assertEquals(20_000, c.path("leaseMillis").asLong(), "the lease granted");
    Instant nodeTime = Instant.parse(c.path("nodeTime").asText());
    assertEquals(ApiTestNode.CLOCK.instant(), nodeTime, "the node's clock at the grant");
    assertEquals(nodeTime.plusMillis(20_000), Instant.parse(c.path("leaseExpiresAt").asText()));
    assertEquals(1, c.path("attempt").asInt());
    assertEquals("NONE", c.path("effect").asText());
    assertEquals("APPLY", c.path("firstStep").asText());
    assertEquals("r-1", c.path("requestId").asText());
  }

  @Test
  void aClaimRepeatedWithItsRequestIdIsTheSameLeaseAndAnotherRequestIsRefused() {
    String runId = api.createRun(ApiTestNode.newJob("retry"), 1);
    String item = item(runId, 1);
    JsonNode first = api.post(item + "/claim", claimBody("ext-1", "r-1", 20_000)).tree();
    ApiTestNode.CLOCK.advance(Duration.ofSeconds(1));
    ApiTestNode.Answer again = api.post(item + "/claim", claimBody("ext-1", "r-1", 20_000));
    assertEquals(200, again.status(), again.body());
    assertEquals(first.path("token").asLong(), again.tree().path("token").asLong());
    assertEquals(first.path("attempt").asInt(), again.tree().path("attempt").asInt());
    ApiTestNode.Answer other = api.post(item + "/claim", claimBody("ext-1", "r-2", 20_000));
    assertEquals(409, other.status(), other.body());
    assertEquals("lease_held", other.error());
    ApiTestNode.Answer bad = api.post(item + "/claim", claimBody("ext-1", "r/1", 20_000));
    assertEquals(400, bad.status(), bad.body());
    assertEquals("requestId", bad.tree().path("field").asText());
  }

  @Test
  void claimNextRepeatedWithItsRequestIdIsTheSameItemAndLease() {
    String runId = api.createRun(ApiTestNode.newJob("next-retry"), 3);
    String path = "/api/runs/" + seg(runId) + "/claim-next";
    String body = claimBody("ext-1", "next-1", 20_000);
    ApiTestNode.Answer first =
        ApiTestNode.await(
            () -> api.post(path, body), a -> a.status() == 200, Duration.ofSeconds(20), "a claim");
    for (int i = 0; i < 3; i++) {
      ApiTestNode.Answer again = api.post(path, body);
      assertEquals(200, again.status(), again.body());
      assertEquals(first.tree().path("itemId").asText(), again.tree().path("itemId").asText());
      assertEquals(first.tree().path("token").asLong(), again.tree().path("token").asLong());
    }
    ApiTestNode.Answer another =
        ApiTestNode.await(
            () -> api.post(path, claimBody("ext-1", "next-2", 20_000)),
            a -> a.status() == 200,
            Duration.ofSeconds(20),
            "a second claim");
    assertFalse(
        first.tree().path("itemId").asText().equals(another.tree().path("itemId").asText()),
        "another request id is another claim");
  }

  @Test
  void aLeaseLongerThanTheNodesLimitIsRefusedNamingTheLimitNeverCut() {
    String runId = api.createRun(ApiTestNode.newJob("too-long"), 1);
    ApiTestNode.Answer refused =
        api.post(item(runId, 1) + "/claim", claimBody("ext-1", null, 3_600_001));
    assertEquals(400, refused.status(), refused.body());
    assertEquals("leaseMillis", refused.tree().path("field").asText());
    assertEquals(3_600_000, refused.tree().path("limit").asLong());
    assertTrue(refused.tree().path("message").asText().contains("fencekeeper.item.max-lease"));
    assertEquals("PENDING", api.get(item(runId, 1)).tree().path("status").asText());
  }

  @Test
  void completeWithAnOutcomeRecordsTheEffectAndCompletesInOneCallAndARepeatAnswersTheSame() {
    String runId = api.createRun(ApiTestNode.newJob("one-call"), 1);
    String item = item(runId, 1);
    long token =
        api.post(item + "/claim", claimBody("ext-1", "r-1", 20_000)).tree().path("token").asLong();
    ApiTestNode.Answer done = api.post(item + "/complete", as("ext-1", token, APPLIED));
    assertEquals(200, done.status(), done.body());
    assertEquals("DONE", done.tree().path("status").asText());
    assertEquals("RECORDED", done.tree().path("effect").asText());
    ApiTestNode.Answer repeated = api.post(item + "/complete", as("ext-1", token, APPLIED));
    assertEquals(200, repeated.status(), "a lost answer, asked again: " + repeated.body());
    JsonNode events = api.get(item + "/audit").tree().path("events");
    assertEquals(2, events.size(), "the claim and one completion: " + events);
    assertEquals("ItemCompleted", events.get(1).path("type").asText());
  }

  /** Decision 6: what each command does after {@code ambiguous}, under a live lease. */
  @Test
  void afterAmbiguousUnderALiveLeaseEveryCommandHasItsDefinedAnswer() {
    String runId = api.createRun(ApiTestNode.newJob("after-ambiguous"), 6);
    String reason = ",\"reason\":\"timeout after send\"";
    List<String> outcomes = new ArrayList<>();
    String[][] next = {
      {"/renew", ",\"leaseMillis\":20000", "200", "LEASED", "AMBIGUOUS"},
      {"/effect", APPLIED, "200", "LEASED", "RECORDED"},
      {"/complete", APPLIED, "200", "DONE", "RECORDED"},
      {"/complete", "", "422", "LEASED", "AMBIGUOUS"},
      {"/fail", ",\"error\":\"gave up\",\"retryable\":true", "200", "PENDING", "AMBIGUOUS"},
      {"/release", "", "200", "PENDING", "AMBIGUOUS"},
    };
    for (int i = 0; i < next.length; i++) {
      String item = item(runId, i + 1);
      long token =
          api.post(item + "/claim", claimBody("ext-1", null, 20_000)).tree().path("token").asLong();
      assertEquals(200, api.post(item + "/ambiguous", as("ext-1", token, reason)).status());
      ApiTestNode.Answer answer = api.post(item + next[i][0], as("ext-1", token, next[i][1]));
      JsonNode now = api.get(item).tree();
      outcomes.add(
          next[i][0]
              + " "
              + answer.status()
              + " "
              + now.path("status").asText()
              + " "
              + now.path("effect").asText());
      assertEquals(
          next[i][0] + " " + next[i][2] + " " + next[i][3] + " " + next[i][4],
          outcomes.get(i),
          answer.body());
    }
    // after a fail or a release the next holder is told to look the key up first
    JsonNode reclaimed =
        api.post(item(runId, 5) + "/claim", claimBody("ext-2", null, 20_000)).tree();
    assertEquals("AMBIGUOUS", reclaimed.path("effect").asText());
    assertEquals("LOOKUP", reclaimed.path("firstStep").asText());
  }

  /**
   * Decision 6, a lapsed lease: {@code ambiguous} is still accepted (and again), anything else is
   * {@code lease_lost}; the next claim looks the key up, and the holder that said so is not lost.
   */
  @Test
  void afterTheLeaseLapsedOnlyAmbiguousIsAcceptedAndTheHolderIsNotLost() {
    String runId = api.createRun(ApiTestNode.newJob("lapsed-ambiguous"), 1);
    String item = item(runId, 1);
    long token =
        api.post(item + "/claim", claimBody("ext-1", null, 5_000)).tree().path("token").asLong();
    ApiTestNode.CLOCK.advance(Duration.ofSeconds(6));
    String reason = ",\"reason\":\"timeout after send\"";
    assertEquals(200, api.post(item + "/ambiguous", as("ext-1", token, reason)).status());
    assertEquals(200, api.post(item + "/ambiguous", as("ext-1", token, reason)).status());
    for (String[] command :
        new String[][] {
          {"/renew", ",\"leaseMillis\":5000"},
          {"/effect", APPLIED},
          {"/complete", APPLIED},
          {"/fail", ",\"error\":\"x\""},
          {"/release", ""}
        }) {
      ApiTestNode.Answer refused = api.post(item + command[0], as("ext-1", token, command[1]));
      assertEquals(409, refused.status(), command[0] + ": " + refused.body());
      assertEquals("lease_lost", refused.error(), command[0]);
      assertEquals(token, refused.tree().path("presentedToken").asLong());
      assertEquals(token, refused.tree().path("currentToken").asLong());
    }
    JsonNode next = api.post(item + "/claim", claimBody("ext-2", null, 5_000)).tree();
    assertEquals("LOOKUP", next.path("firstStep").asText());
    assertTrue(next.path("takeover").asBoolean());
  }

  /**
   * Decision 2 over HTTP: ext-1's claim answer was lost and it never renewed; ext-2 took the item
   * over and died; ext-1 meanwhile claimed another item. The next claim finds ext-1 spoke after its
   * lease ended: one holder lost, not two, and the item is not quarantined at K = 2.
   */
  @Test
  void aWorkerWhoseClaimAnswerWasLostAndThatWentOnElsewhereIsNotALostHolder() {
    String runId = api.createRun(ApiTestNode.newJob("heard-elsewhere"), 2);
    String item = item(runId, 1);
    assertEquals(200, api.post(item + "/claim", claimBody("lost-answer", "r-1", 5_000)).status());
    ApiTestNode.CLOCK.advance(Duration.ofSeconds(6));
    assertEquals(200, api.post(item + "/claim", claimBody("dies", "r-1", 5_000)).status());
    ApiTestNode.CLOCK.advance(Duration.ofSeconds(2));
    assertEquals(
        200, api.post(item(runId, 2) + "/claim", claimBody("lost-answer", "r-2", 5_000)).status());
    ApiTestNode.CLOCK.advance(Duration.ofSeconds(4));
    ApiTestNode.Answer third = api.post(item + "/claim", claimBody("next", "r-1", 5_000));
    assertEquals(200, third.status(), "not quarantined: " + third.body());
    boolean heard = false;
    for (JsonNode event : api.get(item + "/audit").tree().path("events")) {
      heard |=
          event.path("type").asText().equals("HolderSpokeElsewhere")
              && event.path("fields").path("workerId").asText().equals("lost-answer");
    }
    assertTrue(heard, "the audit says why lost-answer was not lost");
  }

  @Test
  void claimNextOfACancelledRunSaysSoAndOfAnUnknownRunIs404() {
    String runId = api.createRun(ApiTestNode.newJob("cancelled"), 1);
    assertEquals(200, api.post("/api/runs/" + seg(runId) + "/cancel", null).status());
    ApiTestNode.Answer cancelled =
        ApiTestNode.await(
            () ->
                api.post(
                    "/api/runs/" + seg(runId) + "/claim-next", claimBody("ext-1", "r-1", 5_000)),
            a -> a.status() == 409,
            Duration.ofSeconds(30),
            "the run cancelled");
    assertEquals("run_cancelled", cancelled.error(), cancelled.body());
    ApiTestNode.Answer unknown =
        api.post(
            "/api/runs/" + seg("nosuch/2026-11-29") + "/claim-next",
            claimBody("ext-1", "r-1", 5_000));
    assertEquals(404, unknown.status());
    assertEquals("unknown_run", unknown.error());
  }

  private JsonNode runView(String runId) {
    return api.get("/api/runs/" + seg(runId)).tree();
  }

  /**
   * Finding 18: a worker that picks its items and claims them by id, never calling claim-next. Its
   * completions and failures are in the run's counts, and the run ends by them as a node's own
   * workers' run does (within a dispatcher's report and the coordinator's tick), not when some
   * claim-next happens to hand the settled items out again.
   */
  @Test
  void aRunWorkedOnlyThroughClaimByIdIsCountedAndEndsWithoutAnyClaimNext() {
    String runId = api.createRun(ApiTestNode.newJob("by-id"), 3);
    for (int account : new int[] {1, 3}) {
      long token = api.claim(item(runId, account), "ext-1");
      ApiTestNode.Answer done =
          api.post(item(runId, account) + "/complete", as("ext-1", token, APPLIED));
      assertEquals(200, done.status(), done.body());
    }
    long token = api.claim(item(runId, 2), "ext-1");
    ApiTestNode.Answer failed =
        api.post(
            item(runId, 2) + "/fail",
            as("ext-1", token, ",\"error\":\"account gone\",\"retryable\":false"));
    assertEquals(200, failed.status(), failed.body());
    JsonNode ended =
        ApiTestNode.await(
            () -> runView(runId),
            run -> !run.path("state").asText().equals("RUNNING"),
            Duration.ofSeconds(30),
            "the run's end without a claim-next");
    assertEquals("PARTIAL", ended.path("state").asText(), ended.toString());
    assertEquals(2, ended.path("counts").path("done").asInt(), ended.toString());
    assertEquals(1, ended.path("counts").path("failed").asInt(), ended.toString());
  }

  /**
   * Finding 18: an item quarantined by claims by id (its holders vanished, one after the other) is
   * in the run's counts, as one a claim-next found quarantined.
   */
  @Test
  void anItemQuarantinedThroughClaimByIdIsCounted() {
    String runId = api.createRun(ApiTestNode.newJob("by-id-quarantined"), 2);
    String item = item(runId, 1);
    ApiTestNode.Answer answer = null;
    for (int holder = 1; holder <= 3; holder++) {
      answer = api.post(item + "/claim", claimBody("vanishing-" + holder, null, 1_000));
      if (answer.status() != 200) {
        break;
      }
      ApiTestNode.CLOCK.advance(Duration.ofSeconds(2)); // its holder never speaks again
    }
    assertEquals(409, answer.status(), answer.body());
    assertEquals("QUARANTINED", api.get(item).tree().path("status").asText());
    JsonNode run =
        ApiTestNode.await(
            () -> runView(runId),
            r -> r.path("counts").path("quarantined").asInt() == 1,
            Duration.ofSeconds(30),
            "the quarantined item counted");
    assertEquals("RUNNING", run.path("state").asText(), "a quarantined item is not settled");
  }

  /**
   * The outsider's "too many failures": with maxFailedItems 0, one FAILED item stops the run's
   * dispatch at once. A claim-next sent after the fail's answer gets no lease, then 409 run_ended
   * naming why, and the run view shows the failure and the reason before the run has ended.
   */
  @Test
  void afterTooManyFailuresClaimNextHandsNothingMoreOutAndTheRunViewSaysWhy() {
    String runId = api.createRun(ApiTestNode.newJob("too-many-failed"), 5, 0);
    String next = "/api/runs/" + seg(runId) + "/claim-next";
    JsonNode lease =
        ApiTestNode.await(
                () -> api.post(next, claimBody("ext-1", null, 20_000)),
                a -> a.status() == 200,
                Duration.ofSeconds(20),
                "a claim")
            .tree();
    String item = "/api/items/" + seg(lease.path("itemId").asText());
    ApiTestNode.Answer failed =
        api.post(
            item + "/fail",
            as("ext-1", lease.path("token").asLong(), ",\"error\":\"bad\",\"retryable\":false"));
    assertEquals("FAILED", failed.tree().path("status").asText(), failed.body());

    ApiTestNode.Answer refused =
        ApiTestNode.await(
            () -> {
              ApiTestNode.Answer answer = api.post(next, claimBody("ext-1", null, 20_000));
              assertTrue(
                  answer.status() != 200, "a lease after the failure limit: " + answer.body());
              return answer;
            },
            a -> a.status() == 409,
            Duration.ofSeconds(30),
            "claim-next refused for the failure limit");
    assertEquals("run_ended", refused.error(), refused.body());
    JsonNode run = runView(runId);
    assertEquals(1, run.path("counts").path("failed").asInt(), run.toString());
    assertTrue(
        run.path("endReason").asText().contains("maxFailedItems"),
        "the view says why it stops: " + run);
    JsonNode ended =
        ApiTestNode.await(
            () -> runView(runId),
            r -> !r.path("state").asText().equals("RUNNING"),
            Duration.ofSeconds(30),
            "the run's end");
    assertEquals("FAILED", ended.path("state").asText(), ended.toString());
  }

  /**
   * The outsider's cancel on a node without workers: a claim-next after the cancel's answer says
   * run_cancelled at once (it said nothing_ready while the run's items were being closed), the view
   * says why the RUNNING run stops, and the run ends CANCELLED once its items are closed.
   */
  @Test
  void aCancelledRunOfThousandsOfItemsAnswersRunCancelledWhileItsItemsAreClosed() {
    String job = ApiTestNode.newJob("cancel-many");
    ApiTestNode.Answer created =
        api.upload(
            RunUploadApiTest.query(job),
            java.net.http.HttpRequest.BodyPublishers.ofString(RunUploadApiTest.csv(3_000)),
            true);
    assertEquals(201, created.status(), created.body());
    String runId = job + "/2026-11-29";
    String next = "/api/runs/" + seg(runId) + "/claim-next";
    ApiTestNode.await(
        () -> api.post(next, claimBody("ext-1", null, 20_000)),
        a -> a.status() == 200,
        Duration.ofSeconds(20),
        "a claim");
    assertEquals(200, api.post("/api/runs/" + seg(runId) + "/cancel", null).status());

    ApiTestNode.Answer refused = api.post(next, claimBody("ext-1", null, 20_000));
    assertEquals(409, refused.status(), refused.body());
    assertEquals("run_cancelled", refused.error(), refused.body());
    JsonNode ended =
        ApiTestNode.await(
            () -> runView(runId),
            r -> !r.path("state").asText().equals("RUNNING"),
            Duration.ofSeconds(120),
            "the cancelled run's end");
    assertEquals("CANCELLED", ended.path("state").asText(), ended.toString());
    assertEquals(3_000, ended.path("counts").path("closed").asInt(), ended.toString());
  }

  /**
   * Finding 10: a fail repeated after its answer was lost is lease_lost, and the answer says the
   * worker's own lease ended the item (it is finished, not lost); a lease that was taken over says
   * it was not.
   */
  @Test
  void aRepeatAfterALostAnswerSaysTheItemWasEndedByThisLeaseNotLost() {
    String runId = api.createRun(ApiTestNode.newJob("ended-by-me"), 2);
    String item = item(runId, 1);
    long token = api.claim(item, "ext-1");
    String fail = as("ext-1", token, ",\"error\":\"gone\",\"retryable\":false");
    assertEquals(200, api.post(item + "/fail", fail).status());
    ApiTestNode.Answer repeated = api.post(item + "/fail", fail);
    assertEquals(409, repeated.status(), repeated.body());
    assertEquals("lease_lost", repeated.error());
    assertEquals("FAILED", repeated.tree().path("status").asText(), repeated.body());
    assertTrue(repeated.tree().path("endedByThisLease").asBoolean(), repeated.body());

    String other = item(runId, 2);
    long first =
        api.post(other + "/claim", claimBody("ext-1", null, 1_000)).tree().path("token").asLong();
    ApiTestNode.CLOCK.advance(Duration.ofSeconds(2));
    api.claim(other, "ext-2");
    ApiTestNode.Answer lost = api.post(other + "/release", as("ext-1", first, ""));
    assertEquals(409, lost.status(), lost.body());
    assertEquals("LEASED", lost.tree().path("status").asText(), lost.body());
    assertFalse(lost.tree().path("endedByThisLease").asBoolean(), lost.body());
  }
}

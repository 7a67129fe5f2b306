package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.api.http.ApiSettings;
import java.net.http.HttpRequest;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, finding 3: a big scope must not have to come from the server's own disk. {@code POST
 * /api/runs} with a {@code text/csv} body streams the accounts into the run; the 64 KiB limit of
 * JSON bodies does not apply, the upload's own limits do.
 */
class RunUploadApiTest {

  private final ApiTestNode api = ApiTestNode.get();

  static String csv(int accounts) {
    StringBuilder text = new StringBuilder("accountId,cursor\n");
    for (int i = 1; i <= accounts; i++) {
      text.append("acct-").append(i).append(",c-1\n");
    }
    return text.toString();
  }

  static String query(String job) {
    return "job="
        + job
        + "&businessDate=2026-11-29&deadline="
        + ApiTestNode.DEADLINE
        + "&maxAttempts=3&maxFailedItems=7";
  }

  /**
   * {@code accounts} rows of 100-character account ids: as many bytes as a scope of 100,000 short
   * ids in a seventh of the rows (staging 100,000 rows on H2 at load 24 took 72 s, past the
   * server's 60 s idle-timeout while the client waited with its body all sent).
   */
  static String wideCsv(int accounts) {
    StringBuilder text = new StringBuilder("accountId,cursor\n");
    for (int i = 1; i <= accounts; i++) {
      text.append(String.format("acct-%095d", i)).append(",c-1\n");
    }
    return text.toString();
  }

  @Test
  void aScopeFarAboveTheJsonBodyLimitIsUploadedAndStaged() {
    String job = ApiTestNode.newJob("upload");
    String body = wideCsv(15_000);
    assertTrue(body.length() > 20 * ApiSettings.DEFAULT_MAX_BODY_BYTES, "far above 64 KiB");

    ApiTestNode.Answer created =
        api.upload(query(job), HttpRequest.BodyPublishers.ofString(body), true);

    assertEquals(201, created.status(), created.body());
    assertEquals(15_000, created.tree().path("counts").path("total").asInt());
    assertEquals(3, created.tree().path("maxAttempts").asInt());
    assertEquals(7, created.tree().path("maxFailedItems").asInt());
    ApiTestNode.Answer items =
        api.get("/api/runs/" + ApiTestNode.seg(job + "/2026-11-29") + "/items?limit=1");
    assertEquals(
        job + "/2026-11-29/" + String.format("acct-%095d", 1) + "/c-1",
        items.tree().path("items").path(0).path("item").path("itemId").asText(),
        items.body());
  }

  @Test
  void theSameUploadAgainAnswersTheRunAndOtherAccountsAreAConflict() {
    String job = ApiTestNode.newJob("upload-again");
    assertEquals(
        201, api.upload(query(job), HttpRequest.BodyPublishers.ofString(csv(50)), true).status());

    ApiTestNode.Answer again =
        api.upload(query(job), HttpRequest.BodyPublishers.ofString(csv(50)), true);
    ApiTestNode.Answer other =
        api.upload(query(job), HttpRequest.BodyPublishers.ofString(csv(51)), true);

    assertEquals(200, again.status(), again.body());
    assertEquals(50, again.tree().path("counts").path("total").asInt());
    assertEquals(409, other.status(), other.body());
    assertEquals("run_conflict", other.error());
  }

  @Test
  void badRowsAreNamedByLineAndNothingIsCreated() {
    String job = ApiTestNode.newJob("upload-bad");
    String body = "accountId,cursor\nacct-1,c-1\nsecret value,c-1\nacct-1,c-1\n";

    ApiTestNode.Answer refused =
        api.upload(query(job), HttpRequest.BodyPublishers.ofString(body), true);

    assertEquals(422, refused.status(), refused.body());
    assertEquals("invalid_scope", refused.error());
    assertTrue(refused.body().contains("line 3, column 1: accountId must be"), refused.body());
    assertTrue(refused.body().contains("line 4: duplicate of line 2"), refused.body());
    assertFalse(refused.body().contains("secret"), refused.body());
    assertEquals(404, api.get("/api/runs/" + ApiTestNode.seg(job + "/2026-11-29")).status());
  }

  @Test
  void anUploadWithoutTheTokenIsRefusedBeforeItIsRead() {
    String job = ApiTestNode.newJob("upload-anon");

    ApiTestNode.Answer refused =
        api.upload(query(job), HttpRequest.BodyPublishers.ofString(csv(10)), false);

    assertEquals(401, refused.status(), refused.body());
    assertEquals(404, api.get("/api/runs/" + ApiTestNode.seg(job + "/2026-11-29")).status());
  }

  @Test
  void runParametersAreQueryParametersAndEachRefusalNamesOne() {
    ApiTestNode.Answer noJob =
        api.upload(
            "businessDate=2026-11-29&deadline=" + ApiTestNode.DEADLINE,
            HttpRequest.BodyPublishers.ofString(csv(1)),
            true);
    ApiTestNode.Answer badDate =
        api.upload(
            "job=j&businessDate=yesterday&deadline=" + ApiTestNode.DEADLINE,
            HttpRequest.BodyPublishers.ofString(csv(1)),
            true);
    ApiTestNode.Answer unknown =
        api.upload(query("j") + "&colour=red", HttpRequest.BodyPublishers.ofString(csv(1)), true);

    assertEquals(400, noJob.status(), noJob.body());
    assertEquals("job", noJob.tree().path("field").asText());
    assertEquals("businessDate", badDate.tree().path("field").asText(), badDate.body());
    assertEquals("colour", unknown.tree().path("field").asText(), unknown.body());
  }

  @Test
  void theItemLimitAndTheByteLimitAreAnsweredWith413NamingTheLimit() {
    try (ApiTestNode small =
        ApiTestNode.fresh(
            Map.of(
                "fencekeeper.max-items-per-run",
                100,
                "fencekeeper.http.max-upload-bytes",
                64 * 1024))) {
      ApiTestNode.Answer tooMany =
          small.upload(query("many"), HttpRequest.BodyPublishers.ofString(csv(101)), true);
      ApiTestNode.Answer tooBig =
          small.upload(
              query("big"),
              HttpRequest.BodyPublishers.ofString(
                  "accountId,cursor\n" + "\n".repeat(100 * 1024) + "acct-1,c-1\n"),
              true);

      assertEquals(413, tooMany.status(), tooMany.body());
      assertEquals("scope_too_large", tooMany.error());
      assertEquals(100, tooMany.tree().path("limit").asInt());
      assertTrue(tooMany.body().contains("fencekeeper.max-items-per-run"), tooMany.body());
      assertEquals(413, tooBig.status(), tooBig.body());
      assertEquals("body_too_large", tooBig.error());
      assertEquals(404, small.get("/api/runs/" + ApiTestNode.seg("many/2026-11-29")).status());
    }
  }
}

package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Every class of bad input is a 4xx with the envelope and a message naming the field, never a 5xx,
 * never a state change: after each refusal the item is still PENDING with an empty journal.
 */
class BadInputTest {

  private final ApiTestNode api = ApiTestNode.get();

  private String pendingItem() {
    String runId = api.createRun(ApiTestNode.newJob("bad"), 1);
    return "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
  }

  private void assertRefused(ApiTestNode.Answer answer, int status, String mentions) {
    assertEquals(status, answer.status(), answer.body());
    assertFalse(answer.error().isEmpty(), answer.body());
    String message = answer.tree().path("message").asText();
    assertTrue(message.contains(mentions), "message should name '" + mentions + "': " + message);
  }

  private void assertUntouched(String item) {
    assertEquals("PENDING", api.get(item).tree().path("status").asText());
    assertEquals(0, api.get(item + "/audit").tree().path("events").size());
  }

  @Test
  void malformedJsonIs400() {
    String item = pendingItem();
    assertRefused(api.post(item + "/claim", "{\"workerId\": \"w\", "), 400, "not valid JSON");
    assertRefused(api.post(item + "/claim", "[1,2]"), 400, "JSON object");
    assertRefused(api.post(item + "/claim", ""), 400, "body is required");
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":1000} trailing"),
        400,
        "JSON");
    assertUntouched(item);
  }

  @Test
  void wrongTypesNameTheField() {
    String item = pendingItem();
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":7,\"leaseMillis\":1000}"), 400, "workerId");
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":\"soon\"}"),
        400,
        "leaseMillis");
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":1.5}"), 400, "leaseMillis");
    assertRefused(
        api.post(item + "/complete", "{\"workerId\":\"w\",\"token\":\"1\"}"), 400, "token");
    assertRefused(
        api.post(
            item + "/fail",
            "{\"workerId\":\"w\",\"token\":1,\"error\":\"x\",\"retryable\":\"yes\"}"),
        400,
        "retryable");
    assertUntouched(item);
  }

  @Test
  void missingAndUnknownFieldsNameTheField() {
    String item = pendingItem();
    assertRefused(api.post(item + "/claim", "{\"leaseMillis\":1000}"), 400, "workerId");
    assertRefused(api.post(item + "/claim", "{\"workerId\":\"w\"}"), 400, "leaseMillis");
    assertRefused(api.post(item + "/complete", "{\"tokn\":1}"), 400, "tokn");
    assertRefused(
        api.post(
            item + "/effect", "{\"workerId\":\"w\",\"token\":1,\"outcome\":{\"kind\":\"MAYBE\"}}"),
        400,
        "outcome.kind");
    assertRefused(
        api.post(
            item + "/effect",
            "{\"workerId\":\"w\",\"token\":1,\"outcome\":{\"kind\":\"APPLIED\",\"x\":1}}"),
        400,
        "x");
    assertRefused(
        api.post(
            "/api/runs",
            "{\"job\":\"j\",\"businessDate\":\"2026-11-29\",\"deadline\":\"2026-11-30T06:00:00Z\"}"),
        400,
        "scope");
    assertRefused(
        api.post(
            "/api/runs",
            "{\"job\":\"j\",\"businessDate\":\"2026-11-29\",\"deadline\":\"2026-11-30T06:00:00Z\",\"scope\":{\"type\":\"ftp\"}}"),
        400,
        "scope.type");
    assertRefused(
        api.post(
            "/api/runs",
            "{\"job\":\"j\",\"businessDate\":\"2026-11-29\",\"deadline\":\"2026-11-30T06:00:00Z\",\"scope\":{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a b\",\"cursor\":\"c\"}]}}"),
        422,
        "accountId");
    assertUntouched(item);
  }

  @Test
  void invalidDatesAndInstantsNameTheField() {
    String base = "{\"job\":\"dates\",\"scope\":{\"type\":\"inline\",\"accounts\":[]},";
    assertRefused(
        api.post(
            "/api/runs",
            base + "\"businessDate\":\"2026-02-30\",\"deadline\":\"2026-11-30T06:00:00Z\"}"),
        400,
        "businessDate");
    assertRefused(
        api.post(
            "/api/runs", base + "\"businessDate\":\"2026-11-29\",\"deadline\":\"tomorrow 6am\"}"),
        400,
        "deadline");
    assertRefused(
        api.post(
            "/api/runs",
            base + "\"businessDate\":\"2026-11-29\",\"deadline\":\"2026-11-30T06:00:00\"}"),
        400,
        "deadline");
    assertEquals(
        404, api.get("/api/runs/" + seg("dates/2026-11-29")).status(), "nothing was created");
    String runId = api.createRun(ApiTestNode.newJob("dates"), 1);
    assertRefused(
        api.post("/api/runs/" + seg(runId) + "/resume", "{\"deadline\":\"2026-13-01T00:00:00Z\"}"),
        400,
        "deadline");
  }

  @Test
  void negativeZeroAndHugeLeasesAreRefused() {
    String item = pendingItem();
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":-1}"), 400, "leaseMillis");
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":0}"), 400, "leaseMillis");
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":86400000000}"),
        400,
        "leaseMillis");
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":99999999999999999999999}"),
        400,
        "leaseMillis");
    assertRefused(api.post(item + "/complete", "{\"workerId\":\"w\",\"token\":-3}"), 400, "token");
    assertUntouched(item);
  }

  /**
   * Announced over the limit, with none of its bytes sent yet: the node has only the headers (as
   * with a slow client, or a loaded node that reads the head before the body), and still answers
   * 413 at once rather than failing the route.
   */
  @Test
  void anOversizedBodyStillInFlightIs413() throws IOException {
    String item = pendingItem();
    try (Socket socket = new Socket("127.0.0.1", api.port)) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST "
                  + item
                  + "/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                  + ApiTestNode.TOKEN
                  + "\r\nContent-Type: application/json\r\nContent-Length: "
                  + 70 * 1024
                  + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      String answer =
          new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertTrue(answer.startsWith("HTTP/1.1 413"), answer);
      assertTrue(answer.contains("\"error\":\"body_too_large\""), answer);
    }
    assertUntouched(item);
  }

  @Test
  void anOversizedBodyIs413() {
    String item = pendingItem();
    String huge = "{\"workerId\":\"" + "w".repeat(70 * 1024) + "\",\"leaseMillis\":1000}";
    ApiTestNode.Answer answer = api.post(item + "/claim", huge);
    assertEquals(413, answer.status(), answer.body());
    assertEquals("body_too_large", answer.error());
    assertUntouched(item);
  }

  @Test
  void invalidIdsAre400AndNameTheParameter() {
    assertRefused(api.get("/api/items/" + seg("not-an-item")), 400, "itemId");
    assertRefused(api.get("/api/items/" + seg("job/2026-99-01/a/c")), 400, "businessDate");
    assertRefused(api.get("/api/runs/" + seg("job/yesterday")), 400, "runId");
    assertRefused(api.get("/api/runs/" + seg("a/b/c")), 400, "runId");
    assertRefused(
        api.post(
            "/api/items/j%2F2026-11-29%2Fa%20b%2Fc/claim",
            "{\"workerId\":\"w\",\"leaseMillis\":1000}"),
        400,
        "accountId");
  }

  @Test
  void unknownRunsAndItemsAre404AndNothingIsJournaled() {
    String runId = api.createRun(ApiTestNode.newJob("unknown"), 1);
    String stranger = ApiTestNode.itemId(runId, 99);
    assertRefused(
        api.post(
            "/api/items/" + seg(stranger) + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":1000}"),
        404,
        "a-99");
    assertRefused(api.get("/api/items/" + seg("nojob/2026-11-29/a-1/c-1")), 404, "nojob");
    assertRefused(api.get("/api/runs/" + seg("nojob/2026-11-29")), 404, "nojob");
    assertRefused(api.get("/api/runs/" + seg("nojob/2026-11-29") + "/items"), 404, "nojob");
    assertRefused(
        api.post(
            "/api/runs/" + seg("nojob/2026-11-29") + "/claim-next",
            "{\"workerId\":\"w\",\"leaseMillis\":1000}"),
        404,
        "nojob");
    assertEquals(404, api.get("/api/items/" + seg(stranger) + "/audit").status());
  }

  @Test
  void badQueriesUnknownPathsAndMethodsGetTheEnvelope() {
    String runId = api.createRun(ApiTestNode.newJob("query"), 1);
    String items = "/api/runs/" + seg(runId) + "/items";
    assertRefused(api.get(items + "?limit=0"), 400, "limit");
    assertRefused(api.get(items + "?limit=abc"), 400, "limit");
    assertRefused(api.get(items + "?status=sleeping"), 400, "status");
    assertRefused(api.get(items + "?after=-7"), 400, "after");
    assertRefused(api.get(items + "?colour=red"), 400, "colour");
    assertRefused(api.get("/api/nothing-here"), 404, "no such endpoint");
    ApiTestNode.Answer delete =
        api.send(HttpRequest.newBuilder(URI.create(api.base + "/api/runs")).DELETE(), null);
    assertRefused(delete, 405, "DELETE");
    assertEquals("application/json", delete.headers().firstValue("Content-Type").orElse(""));
  }

  @Test
  void invalidGovernorCapsAreRefusedAndKeepTheOldCaps() {
    int before = api.get("/api/governor").tree().path("normalCap").asInt();
    ApiTestNode.Answer negative =
        api.send(
            HttpRequest.newBuilder(URI.create(api.base + "/api/governor"))
                .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                .header("Content-Type", "application/json")
                .PUT(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"normalCap\":-1,\"burstCap\":4,\"minCap\":1}")),
            null);
    assertRefused(negative, 400, "normalCap");
    assertEquals(before, api.get("/api/governor").tree().path("normalCap").asInt());
  }
}

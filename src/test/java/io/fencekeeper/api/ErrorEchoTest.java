package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * Issue 25, item 4: an error names the field, index or line and the rule, never the value a caller
 * sent nor a Java class; over-long URIs and headers get 414 and 431 with codes of their own. Each
 * request is the one the review sent; after each, the node still answers and nothing was created.
 */
class ErrorEchoTest {

  private final ApiTestNode api = ApiTestNode.get();

  static final String XSS = "<img src=x onerror=alert(1)>";

  /** The answer repeats none of {@code sent} and names no Java type. */
  static void assertNoEcho(String answer, String... sent) {
    for (String value : sent) {
      assertFalse(answer.contains(value), "the answer repeats '" + value + "': " + answer);
    }
    String lower = answer.toLowerCase(Locale.ROOT);
    for (String java : new String[] {"io.fencekeeper", "java.", "class ", "exception", "jackson"}) {
      assertFalse(lower.contains(java), "the answer names Java (" + java + "): " + answer);
    }
  }

  private void assertNothingCreated(String job) {
    assertEquals(404, api.get("/api/runs/" + seg(job + "/2026-11-29")).status());
    assertEquals(200, api.get("/api/runs").status(), "the node still answers");
  }

  @Test
  void anInlineAccountIdWithMarkupIs422NamingTheFieldNotTheValue() {
    String job = ApiTestNode.newJob("echo-xss");
    ApiTestNode.Answer answer =
        api.post(
            "/api/runs",
            ApiTestNode.createBody(
                job,
                "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\""
                    + XSS
                    + "\",\"cursor\":\"c-1\"}]}"));
    assertEquals(422, answer.status(), answer.body());
    assertEquals("invalid_scope", answer.error());
    assertEquals("scope.accounts[0].accountId", answer.tree().path("field").asText());
    assertTrue(
        answer
            .tree()
            .path("message")
            .asText()
            .contains("scope.accounts[0].accountId must be 1-128"),
        answer.body());
    assertNoEcho(answer.body(), XSS, "onerror", "<img", "\\u003c");
    assertNothingCreated(job);
  }

  @Test
  void anExtraKeyInAnAccountIs422WithoutAClassName() {
    String job = ApiTestNode.newJob("echo-extra");
    ApiTestNode.Answer answer =
        api.post(
            "/api/runs",
            ApiTestNode.createBody(
                job,
                "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"},"
                    + "{\"accountId\":\"a-2\",\"cursor\":\"c-1\",\"evil\":\"x\"}]}"));
    assertEquals(422, answer.status(), answer.body());
    assertEquals("invalid_scope", answer.error());
    assertEquals("scope.accounts[1]", answer.tree().path("field").asText());
    String message = answer.tree().path("message").asText();
    assertTrue(message.contains("unknown field 'evil'"), message);
    assertNoEcho(answer.body(), "AccountCursor", "Unrecognized");
    assertNothingCreated(job);

    ApiTestNode.Answer unreadableKey =
        api.post(
            "/api/runs",
            ApiTestNode.createBody(
                job,
                "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\",\"cursor\":\"c-1\",\""
                    + XSS
                    + "\":1}]}"));
    assertEquals(422, unreadableKey.status(), unreadableKey.body());
    assertNoEcho(unreadableKey.body(), XSS, "onerror");
    assertNothingCreated(job);
  }

  @Test
  void accountsThatAreNotAnArrayAre422WithoutAJavaType() {
    String job = ApiTestNode.newJob("echo-type");
    ApiTestNode.Answer answer =
        api.post(
            "/api/runs", ApiTestNode.createBody(job, "{\"type\":\"inline\",\"accounts\":\"x\"}"));
    assertEquals(422, answer.status(), answer.body());
    assertEquals("invalid_scope", answer.error());
    assertEquals("scope.accounts", answer.tree().path("field").asText());
    assertNoEcho(answer.body(), "ArrayList", "Cannot deserialize", "java.util");
    assertNothingCreated(job);

    ApiTestNode.Answer csvExtra =
        api.post(
            "/api/runs",
            ApiTestNode.createBody(job, "{\"type\":\"csv\",\"path\":\"a.csv\",\"accounts\":[]}"));
    assertEquals(422, csvExtra.status(), csvExtra.body());
    assertEquals("scope", csvExtra.tree().path("field").asText());
    assertNoEcho(csvExtra.body(), "Scope$Csv");
    ApiTestNode.Answer noType =
        api.post("/api/runs", ApiTestNode.createBody(job, "{\"type\":\"" + XSS + "\"}"));
    assertEquals(400, noType.status(), noType.body());
    assertEquals("scope.type", noType.tree().path("field").asText());
    assertNoEcho(noType.body(), XSS, "onerror");
    assertNothingCreated(job);
  }

  @Test
  void everyBadEntryOfAnInlineScopeIsListedByIndex() {
    String job = ApiTestNode.newJob("echo-list");
    ApiTestNode.Answer answer =
        api.post(
            "/api/runs",
            ApiTestNode.createBody(
                job,
                "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"ok\",\"cursor\":\"c\"},7,"
                    + "{\"accountId\":\"a\",\"cursor\":\"has space\"},{\"accountId\":\"b\"}]}"));
    assertEquals(422, answer.status(), answer.body());
    JsonNode problems = answer.tree().path("problems");
    assertEquals(3, problems.size(), answer.body());
    assertTrue(problems.get(0).asText().startsWith("scope.accounts[1] must be an object"));
    assertTrue(problems.get(1).asText().startsWith("scope.accounts[2].cursor must be"));
    assertTrue(problems.get(2).asText().startsWith("scope.accounts[3].cursor must be"));
    assertNoEcho(answer.body(), "has space");
    assertNothingCreated(job);
  }

  @Test
  void anItemIdWithANulIsRefusedWithoutEchoingIt() {
    String answer =
        api.raw(
            "GET /api/items/a%00 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                + ApiTestNode.TOKEN
                + "\r\nConnection: close\r\n\r\n");
    assertTrue(answer.startsWith("HTTP/1.1 400"), answer);
    String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
    JsonNode json = ApiTestNode.Answer.parse(api.json, body);
    assertEquals("itemId", json.path("field").asText(), body);
    assertNoEcho(body, "\u0000", "\\u0000", "got '");

    ApiTestNode.Answer badAccount = api.get("/api/items/" + seg("job/2026-11-29/" + XSS + "/c-1"));
    assertEquals(400, badAccount.status(), badAccount.body());
    assertNoEcho(badAccount.body(), XSS, "onerror");
    ApiTestNode.Answer badRun = api.get("/api/runs/" + seg(XSS + "/2026-11-29"));
    assertEquals(400, badRun.status());
    assertNoEcho(badRun.body(), XSS, "onerror");
    ApiTestNode.Answer badStatus =
        api.get("/api/runs/" + seg("j/2026-11-29") + "/items?status=" + seg(XSS));
    assertNoEcho(badStatus.body(), XSS, "onerror");
    ApiTestNode.Answer badQuery =
        api.get("/api/runs/" + seg("j/2026-11-29") + "/items?" + seg(XSS) + "=1");
    assertEquals(400, badQuery.status(), badQuery.body());
    assertNoEcho(badQuery.body(), XSS, "onerror");
    ApiTestNode.Answer noSuchPath = api.get("/api/" + seg(XSS));
    assertEquals(404, noSuchPath.status());
    assertNoEcho(noSuchPath.body(), XSS, "onerror");
    assertEquals(200, api.get("/api/runs").status(), "the node still answers");
  }

  @Test
  void malformedJsonSaysWhereNotWhat() {
    ApiTestNode.Answer answer = api.post("/api/runs", "{\"job\": " + XSS.replace("<", "") + "}");
    assertEquals(400, answer.status(), answer.body());
    assertEquals("malformed_json", answer.error());
    assertTrue(answer.tree().path("message").asText().contains("line 1, column"), answer.body());
    assertNoEcho(answer.body(), "onerror", "Unrecognized token");
  }

  @Test
  void anOverLongUriIs414AndOverLongHeadersAre431WithTheirOwnCodes() {
    String longUri =
        api.raw(
            "GET /api/runs?x="
                + "a".repeat(5000)
                + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assertTrue(longUri.startsWith("HTTP/1.1 414"), longUri);
    assertEnvelope(longUri, "uri_too_long");

    StringBuilder manyHeaders = new StringBuilder("GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (int i = 0; i < 70; i++) {
      manyHeaders.append("X-Filler-").append(i).append(": ").append(i).append("\r\n");
    }
    String tooMany = api.raw(manyHeaders.append("Connection: close\r\n\r\n").toString());
    assertTrue(tooMany.startsWith("HTTP/1.1 431"), tooMany);
    assertEnvelope(tooMany, "headers_too_large");

    String longHeader =
        api.raw(
            "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: "
                + "b".repeat(20_000)
                + "\r\nConnection: close\r\n\r\n");
    assertTrue(longHeader.startsWith("HTTP/1.1 431"), longHeader);
    assertEnvelope(longHeader, "headers_too_large");
    assertEquals(200, api.get("/api/runs").status(), "the node still answers");
  }

  private void assertEnvelope(String raw, String code) {
    String head = raw.substring(0, raw.indexOf("\r\n\r\n")).toLowerCase(Locale.ROOT);
    String body = raw.substring(raw.indexOf("\r\n\r\n") + 4);
    assertTrue(head.contains("content-type: application/json"), raw);
    assertTrue(head.contains("cache-control: no-store"), raw);
    assertTrue(head.contains("x-content-type-options: nosniff"), raw);
    assertEquals(code, ApiTestNode.Answer.parse(api.json, body).path("error").asText(), body);
    assertNoEcho(body, "aaaa", "bbbb", "X-Filler");
  }
}

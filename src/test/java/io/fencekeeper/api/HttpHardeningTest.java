package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The smaller holes of an exposed node (issue 12, finding 9), each as the caller meets it: a
 * request pekko cannot parse, a page's form post to a loopback node, a rebound host name, a page
 * cursor at the end of int, an audit trail grown by a flood of rejected commands.
 */
class HttpHardeningTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void aRequestThatCannotBeParsedIsAnsweredWithTheErrorEnvelope() {
    String answer =
        api.raw("GET /api/items/%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assertTrue(answer.startsWith("HTTP/1.1 400"), answer);
    assertTrue(answer.toLowerCase().contains("content-type: application/json"), answer);
    assertTrue(answer.contains("\"error\":\"bad_request\""), answer);
    assertFalse(answer.contains("Exception"), answer);
  }

  @Test
  void aChangeWithoutAJsonContentTypeIsRefusedAndChangesNothing() {
    String runId = api.createRun(ApiTestNode.newJob("content-type"), 1);
    String run = "/api/runs/" + seg(runId);
    for (String type : new String[] {"text/plain", "application/x-www-form-urlencoded", null}) {
      HttpRequest.Builder cancel =
          HttpRequest.newBuilder(URI.create(api.base + run + "/cancel"))
              .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
              .POST(HttpRequest.BodyPublishers.ofString("x=1"));
      if (type != null) {
        cancel.header("Content-Type", type);
      }
      ApiTestNode.Answer refused = api.send(cancel, null);
      assertEquals(415, refused.status(), type + ": " + refused.body());
      assertEquals("unsupported_media_type", refused.error());
    }
    assertEquals("RUNNING", api.get(run).tree().path("state").asText());
  }

  /**
   * A node without a token listens on loopback only; a web page whose name was rebound to 127.0.0.1
   * still sends its own name as Host, and a form post cannot say application/json.
   */
  @Test
  void aTokenlessNodeAnswersOnlyRequestsAddressedToLoopbackAndJsonChanges() {
    try (ApiTestNode open = ApiTestNode.freshWithoutToken()) {
      String rebound =
          open.raw(
              "GET /api/runs HTTP/1.1\r\nHost: evil.example:"
                  + open.port
                  + "\r\nConnection: close\r\n\r\n");
      assertTrue(rebound.startsWith("HTTP/1.1 403"), rebound);
      assertTrue(rebound.contains("\"error\":\"host_not_allowed\""), rebound);
      String form =
          open.raw(
              "POST /api/runs HTTP/1.1\r\nHost: localhost:"
                  + open.port
                  + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n"
                  + "Connection: close\r\n\r\nx=1");
      assertTrue(form.startsWith("HTTP/1.1 415"), form);
      String local =
          open.raw(
              "GET /api/runs HTTP/1.1\r\nHost: localhost:"
                  + open.port
                  + "\r\nConnection: close\r\n\r\n");
      assertTrue(local.startsWith("HTTP/1.1 200"), local);
    }
  }

  @Test
  void anItemPageCursorAtTheEndOfIntIsRefusedNotWrappedToTheFirstPage() {
    String runId = api.createRun(ApiTestNode.newJob("after"), 2);
    String items = "/api/runs/" + seg(runId) + "/items";
    ApiTestNode.Answer atTheEnd = api.get(items + "?after=2147483647");
    assertEquals(400, atTheEnd.status(), atTheEnd.body());
    assertEquals("after", atTheEnd.tree().path("field").asText());
    ApiTestNode.Answer pastTheItems = api.get(items + "?after=2147483646");
    assertEquals(200, pastTheItems.status());
    assertEquals(0, pastTheItems.tree().path("items").size(), "not the first page again");
  }

  @Test
  void anAuditTrailGrownByAFloodOfRejectionsIsReadAPageAtATime() {
    String runId = api.createRun(ApiTestNode.newJob("audit-pages"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    long token =
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":600000}")
            .tree()
            .path("token")
            .asLong();
    for (int i = 0; i < 150; i++) {
      ApiTestNode.Answer rejected =
          api.post(item + "/complete", "{\"workerId\":\"x\",\"token\":" + token + "}");
      assertEquals(409, rejected.status());
    }
    Set<Long> seen = new HashSet<>();
    String page = item + "/audit?limit=100";
    JsonNode body = api.get(page).tree();
    assertEquals(100, body.path("events").size());
    assertEquals(100, body.path("next").asLong());
    body.path("events").forEach(e -> seen.add(e.path("sequenceNr").asLong()));
    body = api.get(page + "&after=" + body.path("next").asLong()).tree();
    assertEquals(51, body.path("events").size(), "the claim and 150 rejections: 151 events");
    assertFalse(body.has("next"));
    body.path("events").forEach(e -> seen.add(e.path("sequenceNr").asLong()));
    assertEquals(151, seen.size(), "every event once");

    ApiTestNode.Answer tooMany = api.get(item + "/audit?limit=100000");
    assertEquals(400, tooMany.status());
    assertEquals("limit", tooMany.tree().path("field").asText());
    ApiTestNode.Answer unknown = api.get(item + "/audit?from=1");
    assertEquals(400, unknown.status());
    assertEquals("from", unknown.tree().path("field").asText());
  }

  @Test
  void theHttpServerBoundsConnectionsAndTimePerRequest() {
    Config http = api.node.system().settings().config().getConfig("pekko.http.server");
    assertEquals(Duration.ofSeconds(20), http.getDuration("request-timeout"));
    assertEquals(1024, http.getInt("max-connections"));
    assertEquals(4096, http.getBytes("parsing.max-uri-length"));
    assertEquals("io.fencekeeper.api.http.ParsingErrors", http.getString("parsing.error-handler"));
  }
}

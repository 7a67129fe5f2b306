package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /api/archive/prune} at the edge: it needs the admin token (the read token is refused,
 * no token is refused), and a bad body is a 400 that names the field and never echoes the value; a
 * request that is refused starts nothing.
 */
class ArchiveEndpointsTest {

  static final String READ_TOKEN = "archive-read-token-0123456789";

  @Test
  void badInputIsRefusedNamingTheFieldAndNeverEchoingIt() {
    ApiTestNode api = ApiTestNode.get();
    String secret = "<script>alert(1)</script>";
    Map<String, String> bodies =
        Map.of(
            "{\"endedBefore\":\"" + secret + "\"}",
            "endedBefore",
            "{\"endedBefore\":\"2026-13-45\"}",
            "endedBefore",
            "{\"dryRun\":true}",
            "endedBefore",
            "{\"endedBefore\":42}",
            "endedBefore",
            "{\"endedBefore\":\"2026-12-01\",\"dryRun\":\"yes\"}",
            "dryRun",
            "{\"endedBefore\":\"2026-12-01\",\"endedAfter\":1}",
            "endedAfter",
            "[]",
            "body",
            "",
            "body");
    bodies.forEach(
        (body, field) -> {
          ApiTestNode.Answer refused = api.post("/api/archive/prune", body);
          assertEquals(400, refused.status(), body + " -> " + refused.body());
          JsonNode error = refused.tree();
          assertTrue(error.path("message").asText().length() > 10, refused.body());
          if (!field.equals("body")) {
            assertEquals(field, error.path("field").asText(), refused.body());
          }
          assertFalse(refused.body().contains("<script>"), "never echoed: " + refused.body());
        });
    // a date or an instant; nothing ended before 2000: a pass with nothing to do
    ApiTestNode.Answer dry =
        api.post("/api/archive/prune", "{\"endedBefore\":\"2000-01-01\",\"dryRun\":true}");
    assertEquals(200, dry.status(), dry.body());
    assertEquals("2000-01-01T00:00:00Z", dry.tree().path("endedBefore").asText());
    assertEquals(0, dry.tree().path("total").asInt());
    assertFalse(dry.tree().path("started").asBoolean());
  }

  @Test
  void onlyTheApiTokenMayPrune() throws Exception {
    try (ApiTestNode node =
        ApiTestNode.fresh(Map.of("fencekeeper.http.api-read-token", READ_TOKEN))) {
      for (String token : new String[] {READ_TOKEN, null, "wrong-token-0123456789abcdef"}) {
        HttpRequest.Builder request =
            HttpRequest.newBuilder(URI.create(node.base + "/api/archive/prune"))
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"endedBefore\":\"2027-01-01\",\"dryRun\":true}"));
        if (token != null) {
          request.header("Authorization", "Bearer " + token);
        }
        ApiTestNode.Answer refused = node.send(request, null);
        assertEquals(token == READ_TOKEN ? 403 : 401, refused.status(), refused.body());
      }
      assertEquals(
          200,
          node.post("/api/archive/prune", "{\"endedBefore\":\"2027-01-01\",\"dryRun\":true}")
              .status());
    }
  }
}

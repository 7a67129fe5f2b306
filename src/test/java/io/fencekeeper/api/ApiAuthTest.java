package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Mutations need the bearer token; reads do not; a node on a public address needs a token. */
class ApiAuthTest {

  private final ApiTestNode api = ApiTestNode.get();

  private ApiTestNode.Answer postWith(String path, String authorization, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(api.base + path))
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    return api.send(request, null);
  }

  @Test
  void aMutationWithoutOrWithAWrongTokenIs401AndChangesNothing() {
    String runId = api.createRun(ApiTestNode.newJob("auth"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    String claim = "{\"workerId\":\"intruder\",\"leaseMillis\":30000}";
    for (String authorization :
        new String[] {null, "Bearer wrong-token-0123456789", "Basic dXNlcjpwYXNz", "Bearer "}) {
      ApiTestNode.Answer refused = postWith(item + "/claim", authorization, claim);
      assertEquals(401, refused.status(), refused.body());
      assertEquals("unauthorized", refused.error());
      assertTrue(refused.headers().firstValue("WWW-Authenticate").isPresent());
    }
    assertEquals("PENDING", api.get(item).tree().path("status").asText());
    assertEquals(0, api.get(item + "/audit").tree().path("events").size());
    assertEquals(401, postWith("/api/runs", null, "{}").status());
  }

  @Test
  void readsNeedNoToken() {
    assertEquals(200, api.get("/api/runs").status());
    assertEquals(200, api.get("/api/governor").status());
    assertEquals(200, api.get("/metrics").status());
  }

  @Test
  void aNodeOnANonLoopbackAddressRefusesToStartWithoutAToken() {
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> new ApiSettings("0.0.0.0", 8080, "", "", 65536, Duration.ofHours(1)));
    assertTrue(refused.getMessage().contains("FENCEKEEPER_API_TOKEN"), refused.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> new ApiSettings("node-1.example.internal", 8080, "", "", 65536, Duration.ofHours(1)));
    assertThrows(
        IllegalArgumentException.class,
        () -> new ApiSettings("10.0.0.5", 8080, "short", "", 65536, Duration.ofHours(1)));
    new ApiSettings("0.0.0.0", 8080, "a-long-enough-token-123", "", 65536, Duration.ofHours(1));
    new ApiSettings("127.0.0.1", 8080, "", "", 65536, Duration.ofHours(1));
    new ApiSettings("::1", 8080, "", "", 65536, Duration.ofHours(1));
    new ApiSettings("localhost", 8080, "", "", 65536, Duration.ofHours(1));
  }
}

package io.fencekeeper.api.http;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fencekeeper.api.ApiTestNode;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Who may call what (docs/security.md, "The HTTP API"), as an attacker on the network sees it: with
 * a token set, nothing answers without one, reads included; the read token never changes anything;
 * only a local scrape of /metrics goes without a token.
 */
public class ApiAuthTest {

  public static final String READ_TOKEN = "read-only-token-0123456789";

  private final ApiTestNode api = ApiTestNode.get();

  private ApiTestNode.Answer postWith(String path, String authorization, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(api.base + path))
            .header("Content-Type", "application/json")
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

  /** Finding 1: account ids, cursors, owners, tokens and audit trails are payment data. */
  @Test
  void everyReadNeedsATokenWhenOneIsSetAndLeaksNothingWithout() {
    String runId = api.createRun(ApiTestNode.newJob("reads"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    List<String> reads =
        List.of(
            "/api/runs",
            "/api/runs/" + seg(runId),
            "/api/runs/" + seg(runId) + "/items",
            item,
            item + "/audit",
            "/api/governor",
            "/api/openapi.yaml");
    for (String path : reads) {
      for (String token : new String[] {null, "wrong-token-0123456789abc"}) {
        ApiTestNode.Answer refused = api.getAs(path, token);
        assertEquals(401, refused.status(), path + ": " + refused.body());
        assertEquals("unauthorized", refused.error(), path);
        assertFalse(refused.body().contains("a-1"), path + " leaked an account id");
      }
      assertEquals(200, api.get(path).status(), path + " with the API token");
    }
  }

  @Test
  void theReadTokenReadsEverythingAndChangesNothing() {
    try (ApiTestNode node =
        ApiTestNode.fresh(Map.of("fencekeeper.http.api-read-token", READ_TOKEN))) {
      String runId = node.createRun(ApiTestNode.newJob("read-token"), 1);
      String run = "/api/runs/" + seg(runId);
      String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
      assertEquals(200, node.getAs(run, READ_TOKEN).status());
      assertEquals(200, node.getAs(item + "/audit", READ_TOKEN).status());
      for (String mutation :
          new String[] {run + "/cancel", item + "/claim", item + "/retry", "/api/runs"}) {
        ApiTestNode.Answer refused =
            node.send(
                HttpRequest.newBuilder(URI.create(node.base + mutation))
                    .header("Authorization", "Bearer " + READ_TOKEN)
                    .header("Content-Type", "application/json")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"workerId\":\"w\",\"leaseMillis\":1000}")),
                null);
        assertEquals(403, refused.status(), mutation + ": " + refused.body());
        assertEquals("forbidden", refused.error(), mutation);
      }
      assertEquals("RUNNING", node.get(run).tree().path("state").asText());
      assertEquals("PENDING", node.get(item).tree().path("status").asText());
      assertEquals(0, node.get(item + "/audit").tree().path("events").size());
    }
  }

  @Test
  void metricsGoWithoutATokenOnlyFromThisMachine() {
    assertEquals(200, api.getAs("/metrics", null).status(), "a local Prometheus scrape");
    Optional<InetAddress> external = nonLoopbackAddress();
    assumeTrue(external.isPresent(), "this machine has no non-loopback IPv4 address");
    try (ApiTestNode exposed =
        ApiTestNode.fresh(
            Map.of(
                "fencekeeper.http.host",
                "0.0.0.0",
                "fencekeeper.http.api-token",
                ApiTestNode.TOKEN))) {
      String base = "http://" + external.get().getHostAddress() + ":" + exposed.port;
      ApiTestNode.Answer remote =
          exposed.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).GET(), null);
      assertEquals(401, remote.status(), remote.body());
      assertEquals("unauthorized", remote.error());
      ApiTestNode.Answer withToken =
          exposed.send(
              HttpRequest.newBuilder(URI.create(base + "/metrics"))
                  .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                  .GET(),
              null);
      assertEquals(200, withToken.status());
    }
  }

  static Optional<InetAddress> nonLoopbackAddress() {
    try {
      for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!nic.isUp() || nic.isLoopback()) {
          continue;
        }
        for (InetAddress address : Collections.list(nic.getInetAddresses())) {
          if (address instanceof Inet4Address && !address.isLoopbackAddress()) {
            return Optional.of(address);
          }
        }
      }
    } catch (SocketException e) {
      return Optional.empty();
    }
    return Optional.empty();
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
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new ApiSettings(
                "10.0.0.5", 8080, "same-token-0123456789", "same-token-0123456789", 65536, null));
    new ApiSettings("0.0.0.0", 8080, "a-long-enough-token-123", "", 65536, Duration.ofHours(1));
    new ApiSettings("127.0.0.1", 8080, "", "", 65536, Duration.ofHours(1));
    new ApiSettings("::1", 8080, "", "", 65536, Duration.ofHours(1));
    new ApiSettings("localhost", 8080, "", "", 65536, Duration.ofHours(1));
  }
}

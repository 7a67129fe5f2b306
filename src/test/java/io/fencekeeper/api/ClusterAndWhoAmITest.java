package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** GET /api/cluster and GET /api/whoami, the dashboard's cluster page and its token check. */
class ClusterAndWhoAmITest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void aNodeOfOneHostsTheCoordinatorAndHasNoWorkerPool() {
    ApiTestNode.Answer answer = api.get("/api/cluster");
    assertEquals(200, answer.status(), answer.body());
    JsonNode cluster = answer.tree();
    assertEquals(1, cluster.path("members").size());
    JsonNode self = cluster.path("members").get(0);
    assertEquals("Up", self.path("status").asText());
    assertTrue(self.path("self").asBoolean());
    assertTrue(self.path("coordinator").asBoolean(), "the singleton lives on the oldest Up member");
    assertTrue(self.path("reachable").asBoolean());
    assertEquals(cluster.path("self").asText(), cluster.path("coordinator").asText());
    assertTrue(cluster.path("shardStatsAnswered").asBoolean());
    assertTrue(self.path("shards").isInt() && self.path("items").isInt(), self.toString());
    // this node runs no workers (FENCEKEEPER_WORKERS=0): no pool answers, so no figure is made up
    assertTrue(self.path("workers").path("capacity").isNull(), self.toString());
  }

  @Test
  void whoamiTellsTheRoleOfTheTokenAndRefusesAMissingOrWrongOne() {
    ApiTestNode.Answer none = api.get("/api/whoami");
    assertEquals(401, none.status());
    assertEquals("unauthorized", none.error());
    assertTrue(none.headers().firstValue("WWW-Authenticate").isPresent());
    ApiTestNode.Answer wrong = whoami("Bearer not-the-token-at-all");
    assertEquals(401, wrong.status());
    ApiTestNode.Answer admin = whoami("Bearer " + ApiTestNode.TOKEN);
    assertEquals(200, admin.status());
    assertEquals("admin", admin.tree().path("role").asText());
    assertTrue(admin.tree().path("tokenRequired").asBoolean());
  }

  @Test
  void aNodeWithoutATokenIsOpen() {
    CallerRole open =
        new CallerRole(new ApiSettings("127.0.0.1", 0, "", 65536, Duration.ofHours(1)));
    assertEquals(Optional.of("open"), open.of(""));
    CallerRole guarded =
        new CallerRole(
            new ApiSettings(
                "127.0.0.1", 0, "a-token-of-sixteen-chars", 65536, Duration.ofHours(1)));
    assertEquals(Optional.of("admin"), guarded.of("Bearer a-token-of-sixteen-chars"));
    assertEquals(Optional.empty(), guarded.of("Bearer a-token-of-sixteen-char"));
    assertEquals(Optional.empty(), guarded.of(""));
  }

  private ApiTestNode.Answer whoami(String authorization) {
    return api.send(
        HttpRequest.newBuilder(URI.create(api.base + "/api/whoami"))
            .header("Authorization", authorization)
            .GET(),
        null);
  }
}

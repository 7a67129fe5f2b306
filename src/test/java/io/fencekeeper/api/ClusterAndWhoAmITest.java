package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.http.ApiAuthTest;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Map;
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
    ApiTestNode.Answer none = api.getAs("/api/whoami", null);
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
  void aNodeWithoutATokenIsOpenAndTheReadTokenIsRead() {
    try (ApiTestNode open = ApiTestNode.freshWithoutToken()) {
      ApiTestNode.Answer role = open.getAs("/api/whoami", null);
      assertEquals(200, role.status(), role.body());
      assertEquals("open", role.tree().path("role").asText());
      assertEquals(false, role.tree().path("tokenRequired").asBoolean());
    }
    try (ApiTestNode guarded =
        ApiTestNode.fresh(Map.of("fencekeeper.http.api-read-token", ApiAuthTest.READ_TOKEN))) {
      ApiTestNode.Answer role = guarded.getAs("/api/whoami", ApiAuthTest.READ_TOKEN);
      assertEquals(200, role.status(), role.body());
      assertEquals("read", role.tree().path("role").asText());
    }
  }

  private ApiTestNode.Answer whoami(String authorization) {
    return api.send(
        HttpRequest.newBuilder(URI.create(api.base + "/api/whoami"))
            .header("Authorization", authorization)
            .GET(),
        null);
  }
}

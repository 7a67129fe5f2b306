package io.fencekeeper.api.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.ApiTestNode;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeSettings;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The fleet's signal as an autoscaler and an operator read it (docs/cluster.md, "The fleet follows
 * the window"): {@code GET /api/fleet} and the {@code fencekeeper_fleet_nodes_wanted} gauge, the
 * configured bounds in both, each running run's need in its view; bounds that cannot hold refuse to
 * start the node.
 */
class FleetEndpointTest {

  @Test
  void anIdleClusterWantsItsMinimumAndARunningRunShowsItsNeed() {
    try (ApiTestNode api =
        ApiTestNode.fresh(
            Map.of("fencekeeper.fleet.min-nodes", 2, "fencekeeper.fleet.max-nodes", 5))) {
      // the node's dispatch agent reaches the coordinator through the receptionist, a moment
      // after the node is up
      JsonNode idle =
          ApiTestNode.await(
              () -> api.get("/api/fleet").tree(),
              fleet -> fleet.path("nodes").asInt() == 1,
              java.time.Duration.ofSeconds(30),
              "the node's agent counted");
      assertEquals("IDLE", idle.path("reason").asText(), idle.toString());
      assertEquals(2, idle.path("wanted").asInt(), "down to min-nodes");
      assertEquals(2, idle.path("minNodes").asInt());
      assertEquals(5, idle.path("maxNodes").asInt());
      assertEquals(0, idle.path("runs").size());
      String scrape = api.get("/metrics").body();
      assertTrue(
          scrape.contains("fencekeeper_fleet_nodes_wanted{reason=\"idle\"} 2.0"), scrapeOf(scrape));
      assertTrue(scrape.contains("fencekeeper_fleet_nodes 1.0"), scrapeOf(scrape));

      // the node has no workers: the run's items wait, nothing completes, so no rate to judge by
      String runId = api.createRun(ApiTestNode.newJob("fleet"), 3);
      JsonNode need =
          ApiTestNode.await(
              () -> api.get("/api/runs/" + ApiTestNode.seg(runId)).tree().path("fleet"),
              fleet -> fleet.has("reason"),
              java.time.Duration.ofSeconds(30),
              "the running run's fleet need");
      assertEquals("ON_TRACK", need.path("reason").asText(), need.toString());
      assertEquals("no completion rate yet", need.path("detail").asText());
      JsonNode fleet = api.get("/api/fleet").tree();
      assertEquals("ON_TRACK", fleet.path("reason").asText(), fleet.toString());
      assertEquals(2, fleet.path("wanted").asInt(), "nothing in flight: still the minimum");
      assertEquals(runId, fleet.path("runs").path(0).path("runId").asText());
      assertTrue(
          api.get("/metrics")
              .body()
              .contains("fencekeeper_fleet_nodes_wanted{reason=\"on_track\"} 2.0"),
          "one series, the reason of now");
      assertTrue(
          !api.get("/metrics").body().contains("fencekeeper_fleet_nodes_wanted{reason=\"idle\"}"),
          "the idle series left the scrape");

      api.post("/api/runs/" + ApiTestNode.seg(runId) + "/cancel", "");
      JsonNode ended =
          ApiTestNode.await(
              () -> api.get("/api/runs/" + ApiTestNode.seg(runId)).tree(),
              run -> run.path("state").asText().equals("CANCELLED"),
              java.time.Duration.ofSeconds(60),
              "the run cancelled");
      assertTrue(ended.path("fleet").isNull(), "an ended run needs nothing: " + ended);
      assertEquals("IDLE", api.get("/api/fleet").tree().path("reason").asText());
    }
  }

  @Test
  void boundsThatCannotHoldAreRefusedNamingTheSetting() {
    for (Map<String, Object> bad :
        java.util.List.<Map<String, Object>>of(
            Map.of("fencekeeper.fleet.min-nodes", 0),
            Map.of("fencekeeper.fleet.min-nodes", 4, "fencekeeper.fleet.max-nodes", 3),
            Map.of("fencekeeper.fleet.max-nodes", Integer.MAX_VALUE))) {
      IllegalArgumentException refused =
          assertThrows(
              IllegalArgumentException.class,
              () -> NodeSettings.from(FencekeeperNode.config(bad)),
              bad.toString());
      assertTrue(refused.getMessage().contains("fencekeeper.fleet"), refused.getMessage());
    }
  }

  private static String scrapeOf(String scrape) {
    return scrape.lines().filter(l -> l.contains("fleet")).toList().toString();
  }
}

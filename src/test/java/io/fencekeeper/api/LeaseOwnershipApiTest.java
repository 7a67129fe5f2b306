package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.item.NodeWorkers;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A lease belongs to the worker that claimed it (issue 12, finding 8), and a lease that lapsed
 * without an outcome stays ambiguous (finding 7): through the lease API as an external worker meets
 * it.
 */
class LeaseOwnershipApiTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void anotherWorkerWithTheCurrentTokenCannotCompleteFailOrReleaseTheLease() {
    String runId = api.createRun(ApiTestNode.newJob("ownership"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    long token =
        api.post(item + "/claim", "{\"workerId\":\"holder\",\"leaseMillis\":600000}")
            .tree()
            .path("token")
            .asLong();
    String asIntruder = "{\"workerId\":\"intruder\",\"token\":" + token;
    for (String[] command :
        new String[][] {
          {"/release", asIntruder + "}"},
          {"/fail", asIntruder + ",\"error\":\"x\",\"retryable\":false}"},
          {"/ambiguous", asIntruder + ",\"reason\":\"x\"}"},
          {"/effect", asIntruder + ",\"outcome\":{\"kind\":\"APPLIED\"}}"},
          {"/renew", asIntruder + ",\"leaseMillis\":1000}"}
        }) {
      ApiTestNode.Answer refused = api.post(item + command[0], command[1]);
      assertEquals(409, refused.status(), command[0] + ": " + refused.body());
      assertEquals("lease_lost", refused.error(), command[0]);
    }
    JsonNode after = api.get(item).tree();
    assertEquals("LEASED", after.path("status").asText());
    assertEquals("holder", after.path("owner").asText());
    assertEquals("NONE", after.path("effect").asText());
    JsonNode events = api.get(item + "/audit").tree().path("events");
    assertEquals(6, events.size(), "the claim and five rejections, each audited");
    assertEquals("intruder", events.get(1).path("fields").path("workerId").asText());
  }

  @Test
  void aWorkerWhoseLeaseLapsedCannotFailOrReleaseItCleanTheNextClaimReconciles() {
    String runId = api.createRun(ApiTestNode.newJob("lapsed"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    long token =
        api.post(item + "/claim", "{\"workerId\":\"slow\",\"leaseMillis\":5000}")
            .tree()
            .path("token")
            .asLong();
    // its apply timed out; by the time it reports, the lease has lapsed
    ApiTestNode.CLOCK.advance(Duration.ofSeconds(6));
    String asHolder = "{\"workerId\":\"slow\",\"token\":" + token;
    ApiTestNode.Answer fail =
        api.post(item + "/fail", asHolder + ",\"error\":\"timeout\",\"retryable\":true}");
    assertEquals(409, fail.status(), fail.body());
    assertEquals("lease_lost", fail.error());
    assertEquals(409, api.post(item + "/release", asHolder + "}").status());
    // the one thing it may still say: it does not know
    assertEquals(
        200, api.post(item + "/ambiguous", asHolder + ",\"reason\":\"timeout\"}").status());
    JsonNode next =
        api.post(item + "/claim", "{\"workerId\":\"next\",\"leaseMillis\":60000}").tree();
    assertEquals("AMBIGUOUS", next.path("effect").asText(), "look the key up before any apply");
  }

  /**
   * An item forgives a silent holder that is one of a member node's own workers; a lease API caller
   * that names itself like them ({@code {node address}/w{n}}) borrows none of that: its claims name
   * no node, so two silent look-alikes quarantine the item at the default K = 2.
   */
  @Test
  void aLeaseApiWorkerNamedLikeTheNodesOwnWorkersIsCountedLostWhenSilent() {
    String runId = api.createRun(ApiTestNode.newJob("look-alike"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    String address = api.node.system().address().toString();
    for (int n = 1; n <= 2; n++) {
      String lookAlike = NodeWorkers.id(address, 900 + n);
      ApiTestNode.Answer claimed =
          api.post(item + "/claim", "{\"workerId\":\"" + lookAlike + "\",\"leaseMillis\":5000}");
      assertEquals(200, claimed.status(), claimed.body());
      // silent: its lease lapses without a word
      ApiTestNode.CLOCK.advance(Duration.ofSeconds(6));
    }
    ApiTestNode.Answer third =
        api.post(item + "/claim", "{\"workerId\":\"next\",\"leaseMillis\":5000}");
    assertEquals(409, third.status(), third.body());
    assertEquals("not_claimable", third.error(), third.body());
    assertEquals("QUARANTINED", api.get(item).tree().path("status").asText());
    JsonNode events = api.get(item + "/audit").tree().path("events");
    for (JsonNode event : events) {
      assertNotEquals(
          "HolderNodeAlive", event.path("type").asText(), "forgiven as a node's worker: " + events);
    }
  }
}

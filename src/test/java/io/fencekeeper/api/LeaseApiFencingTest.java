package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The classic fencing incident, driven entirely through the HTTP lease API. */
class LeaseApiFencingTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void pausedWorkerCannotCommitAfterAnotherWorkerClaimedThroughTheLeaseApi() {
    String runId = api.createRun(ApiTestNode.newJob("fencing"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));

    JsonNode a =
        api.post(item + "/claim", "{\"workerId\":\"worker-a\",\"leaseMillis\":10000}").tree();
    long tokenA = a.path("token").asLong();

    // worker A pauses; its lease runs out on the item's clock
    ApiTestNode.CLOCK.advance(Duration.ofSeconds(11));

    ApiTestNode.Answer b =
        api.post(item + "/claim", "{\"workerId\":\"worker-b\",\"leaseMillis\":60000}");
    assertEquals(200, b.status(), b.body());
    long tokenB = b.tree().path("token").asLong();
    assertTrue(tokenB > tokenA);
    assertEquals(
        "AMBIGUOUS", b.tree().path("effect").asText(), "A never reported: B must reconcile");
    assertTrue(b.tree().path("takeover").asBoolean());

    // A wakes up and tries to finish its work
    ApiTestNode.Answer effectA =
        api.post(
            item + "/effect",
            "{\"workerId\":\"worker-a\",\"token\":"
                + tokenA
                + ",\"outcome\":{\"kind\":\"APPLIED\"}}");
    assertEquals(409, effectA.status(), effectA.body());
    assertEquals("lease_lost", effectA.error());
    assertEquals(tokenA, effectA.tree().path("presentedToken").asLong());
    assertEquals(tokenB, effectA.tree().path("currentToken").asLong());
    ApiTestNode.Answer completeA =
        api.post(item + "/complete", "{\"workerId\":\"worker-a\",\"token\":" + tokenA + "}");
    assertEquals(409, completeA.status());
    assertEquals("lease_lost", completeA.error());

    // B finishes; the item is B's, with one effect record
    assertEquals(
        200,
        api.post(
                item + "/effect",
                "{\"workerId\":\"worker-b\",\"token\":"
                    + tokenB
                    + ",\"outcome\":{\"kind\":\"FOUND_BY_LOOKUP\"}}")
            .status());
    ApiTestNode.Answer done =
        api.post(item + "/complete", "{\"workerId\":\"worker-b\",\"token\":" + tokenB + "}");
    assertEquals("DONE", done.tree().path("status").asText());
    assertEquals("worker-b", done.tree().path("owner").asText());

    List<String> trail = new ArrayList<>();
    List<Long> rejected = new ArrayList<>();
    for (JsonNode event : api.get(item + "/audit").tree().path("events")) {
      trail.add(event.path("type").asText());
      if (event.path("type").asText().equals("StaleCommandRejected")) {
        rejected.add(event.path("fields").path("presentedToken").asLong());
      }
    }
    assertEquals(
        List.of(
            "LeaseGranted",
            "LeaseGranted",
            "StaleCommandRejected",
            "LateHolderHeard", // worker-a was lost when worker-b took over; it speaks: alive
            "StaleCommandRejected",
            "EffectRecorded",
            "ItemCompleted"),
        trail);
    assertEquals(List.of(tokenA, tokenA), rejected);
  }
}

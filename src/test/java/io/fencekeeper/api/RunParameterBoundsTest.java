package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * A run can never be wedged by its parameters (issue 12, finding 6): a deadline at the end of time
 * once overflowed the governor's arithmetic and left the run RUNNING for ever; a deadline in the
 * past closed every item at once. Both are refused before anything is staged, naming the field.
 */
class RunParameterBoundsTest {

  private final ApiTestNode api = ApiTestNode.get();

  private ApiTestNode.Answer create(String job, String deadline) {
    return api.post(
        "/api/runs",
        "{\"job\":\""
            + job
            + "\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
            + deadline
            + "\",\"scope\":{\"type\":\"inline\",\"accounts\":"
            + "[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"}]}}");
  }

  @Test
  void deadlinesInThePastOrBeyondTheLongestRunAreRefusedNamingTheDeadline() {
    // the test node's clock stands at 2026-11-29T23:00:00Z; the longest run is 7 days
    for (String deadline :
        new String[] {
          "+999999999-12-31T23:59:59Z", "2026-11-29T22:59:59Z", "2026-12-07T00:00:00Z"
        }) {
      String job = ApiTestNode.newJob("deadline");
      ApiTestNode.Answer refused = create(job, deadline);
      assertEquals(422, refused.status(), deadline + ": " + refused.body());
      assertEquals("invalid_run", refused.error());
      assertEquals("deadline", refused.tree().path("field").asText(), deadline);
      assertEquals(404, api.get("/api/runs/" + seg(job + "/2026-11-29")).status(), "not created");
    }
    assertEquals(201, create(ApiTestNode.newJob("deadline"), "2026-12-06T22:00:00Z").status());
  }

  @Test
  void aResumeDeadlineBeyondTheLongestRunIsRefusedNamingTheDeadline() {
    String runId = api.createRun(ApiTestNode.newJob("resume-far"), 1);
    String run = "/api/runs/" + seg(runId);
    assertEquals(200, api.post(run + "/cancel", null).status());
    ApiTestNode.await(
        () -> api.get(run),
        a -> a.tree().path("state").asText().equals("CANCELLED"),
        java.time.Duration.ofSeconds(20),
        "the run to end CANCELLED");
    ApiTestNode.Answer far = api.post(run + "/resume", "{\"deadline\":\"2030-01-01T00:00:00Z\"}");
    assertEquals(422, far.status(), far.body());
    assertEquals("invalid_deadline", far.error());
    assertEquals("deadline", far.tree().path("field").asText());
    assertEquals("CANCELLED", api.get(run).tree().path("state").asText());
  }
}

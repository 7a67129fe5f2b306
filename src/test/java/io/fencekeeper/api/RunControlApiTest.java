package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Resume and cancel, on a node of their own: a cancel ends the run's dispatchers on the node, which
 * the shared test node's other runs need not see.
 */
class RunControlApiTest {

  private static ApiTestNode api;

  @BeforeAll
  static void start() {
    api = ApiTestNode.fresh();
  }

  @AfterAll
  static void stop() {
    api.node.close();
  }

  @Test
  void cancelEndsTheRunAndResumeNeedsAFutureDeadline() {
    String runId = api.createRun(ApiTestNode.newJob("cancel"), 1);
    String run = "/api/runs/" + seg(runId);
    ApiTestNode.Answer running =
        api.post(run + "/resume", "{\"deadline\":\"2026-12-01T06:00:00Z\"}");
    assertEquals(409, running.status(), running.body());
    assertEquals("run_running", running.error());
    assertEquals(200, api.post(run + "/cancel", null).status());
    ApiTestNode.await(
        () -> api.get(run),
        a -> a.tree().path("state").asText().equals("CANCELLED"),
        Duration.ofSeconds(20),
        "the run to end CANCELLED");
    ApiTestNode.Answer past = api.post(run + "/resume", "{\"deadline\":\"2020-01-01T00:00:00Z\"}");
    assertEquals(422, past.status(), past.body());
    assertEquals(404, api.post("/api/runs/" + seg("nosuch/2026-11-29") + "/cancel", null).status());
  }
}

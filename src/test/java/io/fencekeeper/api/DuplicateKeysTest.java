package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Issue 25, item 6: a JSON body that gives a key twice is refused with 400 naming the key,
 * whichever body it is (a create, a lease command, a nested object), and changes nothing: which of
 * the two values counts must not be the parser's choice.
 */
class DuplicateKeysTest {

  private final ApiTestNode api = ApiTestNode.get();

  /** The review's create: {@code {"job":"a","job":"b",...}}. */
  static String jobTwice(String a, String b) {
    return "{\"job\":\""
        + a
        + "\",\"job\":\""
        + b
        + "\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
        + ApiTestNode.DEADLINE
        + "\",\"scope\":{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\","
        + "\"cursor\":\"c-1\"}]}}";
  }

  @Test
  void aCreateThatNamesItsJobTwiceIsRefusedAndCreatesNeitherRun() {
    String a = ApiTestNode.newJob("dup-a");
    String b = ApiTestNode.newJob("dup-b");
    ApiTestNode.Answer answer = api.post("/api/runs", jobTwice(a, b));
    assertEquals(400, answer.status(), answer.body());
    assertEquals("bad_request", answer.error());
    assertEquals("job", answer.tree().path("field").asText());
    assertTrue(
        answer.tree().path("message").asText().contains("the key 'job' appears more than once"),
        answer.body());
    assertEquals(404, api.get("/api/runs/" + seg(a + "/2026-11-29")).status());
    assertEquals(404, api.get("/api/runs/" + seg(b + "/2026-11-29")).status());
  }

  /** The review's body as raw bytes on a socket of its own: the same refusal. */
  @Test
  void theRawBodyIsRefusedTheSameWay() {
    String a = ApiTestNode.newJob("dup-raw-a");
    String b = ApiTestNode.newJob("dup-raw-b");
    String answer =
        api.rawPost("/api/runs", jobTwice(a, b).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertTrue(answer.startsWith("HTTP/1.1 400"), answer);
    assertTrue(answer.contains("\"field\":\"job\""), answer);
    assertEquals(404, api.get("/api/runs/" + seg(b + "/2026-11-29")).status());
    assertEquals(404, api.get("/api/runs/" + seg(a + "/2026-11-29")).status());
  }

  @Test
  void duplicatesAreRefusedInNestedObjectsAndLeaseCommandsToo() {
    String job = ApiTestNode.newJob("dup-nested");
    ApiTestNode.Answer nested =
        api.post(
            "/api/runs",
            ApiTestNode.createBody(
                job,
                "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\","
                    + "\"accountId\":\"a-2\",\"cursor\":\"c-1\"}]}"));
    assertEquals(400, nested.status(), nested.body());
    assertEquals("accountId", nested.tree().path("field").asText());
    assertEquals(404, api.get("/api/runs/" + seg(job + "/2026-11-29")).status());

    String runId = api.createRun(ApiTestNode.newJob("dup-lease"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    ApiTestNode.Answer claim =
        api.post(
            item + "/claim", "{\"workerId\":\"w-1\",\"workerId\":\"w-2\",\"leaseMillis\":1000}");
    assertEquals(400, claim.status(), claim.body());
    assertEquals("workerId", claim.tree().path("field").asText());
    assertEquals("PENDING", api.get(item).tree().path("status").asText(), "nothing was claimed");
    assertEquals(0, api.get(item + "/audit").tree().path("events").size());
    ApiTestNode.Answer governor =
        api.send(
            java.net.http.HttpRequest.newBuilder(java.net.URI.create(api.base + "/api/governor"))
                .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                .header("Content-Type", "application/json")
                .PUT(
                    java.net.http.HttpRequest.BodyPublishers.ofString(
                        "{\"normalCap\":4,\"normalCap\":400,\"burstCap\":8,\"minCap\":1}")),
            null);
    assertEquals(400, governor.status(), governor.body());
    assertEquals("normalCap", governor.tree().path("field").asText());
  }
}

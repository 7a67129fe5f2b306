package io.fencekeeper.provider.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sim as a server of protocol 1.1 (docs/provider-protocol.md), asked over real HTTP: the order
 * of checks of a cleanup, the deadline, the effect's identity, the version header, and the same sim
 * answering as a 1.0 server.
 */
class SimProtocolTest {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final Duration DEADLINE = Duration.ofSeconds(20);
  private static final String BODY =
      "{\"itemId\":\"j/2026-11-29/a-1/c-1\",\"job\":\"j\",\"businessDate\":\"2026-11-29\","
          + "\"accountId\":\"a-1\",\"cursor\":\"c-1\",\"action\":\"write-off-residual\","
          + "\"amountMinor\":100,\"description\":\"d\",\"currency\":\"EUR\"}";

  private SimProviderServer sim;

  @BeforeEach
  void start() {
    sim = SimProviderServer.start(0, SimFaults.NONE, 5L);
  }

  @AfterEach
  void stop() {
    sim.close();
  }

  /**
   * Step 1 before step 2: a request that cannot be read is refused as such, throttled or not; its
   * headers are read first, then its media type, then its body; a refusal before the body was read
   * closes the connection.
   */
  @Test
  void aRequestThatCannotBeReadIsRefusedBeforeTheRateLimitHeadersFirst() {
    sim.setFaults(SimFaults.NONE.withThrottlePerSecond(0.01));
    assertEquals(
        200,
        get("/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1").statusCode(),
        "the one token of the burst");

    HttpResponse<String> notJson = send(cleanup("fk-1", "1", null, BODY, "text/plain"));
    HttpResponse<String> noKey = send(cleanup(null, "1", null, BODY, "application/json"));
    HttpResponse<String> noKeyNotJson = send(cleanup(null, "1", null, BODY, "text/plain"));
    HttpResponse<String> badDeadline =
        send(cleanup("fk-1", "1", "tomorrow", BODY, "application/json"));
    HttpResponse<String> offsetDeadline =
        send(cleanup("fk-1", "1", "2026-11-30T02:00:00+01:00", BODY, "application/json"));
    HttpResponse<String> throttled = send(cleanup("fk-1", "1", null, BODY, "application/json"));

    assertEquals(415, notJson.statusCode());
    assertEquals(HttpProtocol.UNSUPPORTED_MEDIA_TYPE, error(notJson));
    for (HttpResponse<String> refused : List.of(noKey, noKeyNotJson, badDeadline, offsetDeadline)) {
      assertEquals(400, refused.statusCode(), refused.body());
      assertEquals(HttpProtocol.BAD_REQUEST, error(refused));
    }
    for (HttpResponse<String> early : List.of(notJson, noKey)) {
      assertEquals(Optional.of("close"), early.headers().firstValue("Connection"));
    }
    assertTrue(badDeadline.body().contains("RFC 3339"), badDeadline.body());
    assertEquals(429, throttled.statusCode(), "a request that can be read meets the limit");
    assertEquals(Map.of(), sim.effects());
  }

  /** Step 2 before step 3: a throttled request never reaches the fencing check. */
  @Test
  void aThrottledRequestRaisesNoMark() {
    assertEquals(201, apply("fk-1", 1, BODY).statusCode());
    sim.setFaults(SimFaults.NONE.withThrottlePerSecond(0.01));
    apply("fk-other", 1, BODY); // the one token of the burst
    assertEquals(429, apply("fk-1", 9, BODY).statusCode());
    sim.setFaults(SimFaults.NONE);

    assertEquals(
        200, apply("fk-1", 2, BODY).statusCode(), "token 2 is not stale: 9 was never seen");
  }

  /** Step 3 before step 4: a stale caller is told to stop while the key is still in flight. */
  @Test
  void aStaleTokenIsRefusedWhileTheKeyIsInFlightNotToldToRetry() throws Exception {
    sim.setFaults(SimFaults.NONE.withLatency(1_500, 0));
    CompletableFuture<HttpResponse<String>> first =
        CLIENT.sendAsync(
            cleanup("fk-1", "5", null, BODY, "application/json"),
            HttpResponse.BodyHandlers.ofString());
    Await.until(DEADLINE, "the first cleanup is in flight", () -> sim.inFlight("fk-1"));

    // both decided at once on arrival (and answered after the same delay)
    CompletableFuture<HttpResponse<String>> staleCall = applyAsync("fk-1", 4, BODY);
    CompletableFuture<HttpResponse<String>> currentCall = applyAsync("fk-1", 5, BODY);
    HttpResponse<String> stale = staleCall.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    HttpResponse<String> current = currentCall.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);

    assertEquals(409, stale.statusCode());
    assertEquals(HttpProtocol.STALE_TOKEN, error(stale));
    assertEquals(5, json(stale).get("highestToken").asLong());
    assertEquals(409, current.statusCode());
    assertEquals(HttpProtocol.KEY_IN_USE, error(current));
    assertEquals(201, first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS).statusCode());
    assertEquals(Map.of("fk-1", 1), sim.effects());
  }

  /**
   * Step 6: a cleanup whose deadline has passed by the sim's clock applies nothing and leaves its
   * key free; the mark it raised stays. A repeat of an applied key replays whatever its deadline.
   */
  @Test
  void aCleanupPastItsDeadlineAppliesNothingButAReplayIsAReplayWhateverTheDeadline() {
    String past = HttpProtocol.formatDeadline(Instant.now().minusSeconds(1));

    HttpResponse<String> late = send(cleanup("fk-late", "3", past, BODY, "application/json"));

    assertEquals(409, late.statusCode());
    assertEquals(HttpProtocol.DEADLINE_PASSED, error(late));
    assertEquals(Map.of(), sim.effects());
    assertFalse(sim.inFlight("fk-late"));
    assertEquals(409, apply("fk-late", 2, BODY).statusCode(), "the mark it raised stays: stale");
    assertEquals(201, apply("fk-late", 3, BODY).statusCode(), "and the key is free");

    HttpResponse<String> replay = send(cleanup("fk-late", "3", past, BODY, "application/json"));
    assertEquals(200, replay.statusCode(), replay.body());
    assertEquals(Map.of("fk-late", 1), sim.effects());
  }

  /** Step 6 after the delay: a deadline that passes while the cleanup waits applies nothing. */
  @Test
  void aDeadlineThatPassesDuringTheDelayAppliesNothing() {
    sim.setFaults(SimFaults.NONE.withLatency(600, 0));
    String soon = HttpProtocol.formatDeadline(Instant.now().plusMillis(300));

    HttpResponse<String> late = send(cleanup("fk-slow", "1", soon, BODY, "application/json"));

    assertEquals(409, late.statusCode(), late.body());
    assertEquals(HttpProtocol.DEADLINE_PASSED, error(late));
    assertEquals(Map.of(), sim.effects());
  }

  /** The effect's identity decides a replay; a changed amount is another effect. */
  @Test
  void aRepeatedKeyIsComparedOnTheEffectsIdentityAlone() {
    assertEquals(201, apply("fk-1", 1, BODY).statusCode());
    String redescribed =
        BODY.replace("\"d\"", "\"described anew\"")
            .replace("\"cursor\":\"c-1\"", "\"comesLater\":{\"x\":1}");
    String withoutCurrency = BODY.replace(",\"currency\":\"EUR\"", "");

    assertEquals(200, apply("fk-1", 1, redescribed).statusCode());
    assertEquals(200, apply("fk-1", 1, withoutCurrency).statusCode(), "a 1.0 client's body");
    HttpResponse<String> dollars = apply("fk-1", 1, BODY.replace("EUR", "USD"));
    HttpResponse<String> more = apply("fk-1", 1, BODY.replace(":100", ":101"));
    for (HttpResponse<String> reused : List.of(dollars, more)) {
      assertEquals(422, reused.statusCode());
      assertEquals(HttpProtocol.KEY_REUSED, error(reused));
    }
    assertEquals(Map.of("fk-1", 1), sim.effects());
  }

  /**
   * Every answer of a 1.1 server says so, on any path, the sim's own endpoints and the answers of
   * its HTTP layer included.
   */
  @Test
  void everyAnswerOfTheProtocolCarriesTheVersionAndAnotherMajorVersionIsRefused() {
    sim.setFaults(SimFaults.NONE);
    List<HttpResponse<String>> answers =
        List.of(
            get("/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1"),
            get("/v1/plans"),
            get("/v1/cleanups/fk-none"),
            apply("fk-1", 1, BODY),
            apply("fk-1", 0, BODY),
            get("/v1/nothing-here"),
            get("/ledger"),
            send(
                HttpRequest.newBuilder(sim.baseUrl().resolve(HttpProtocol.PLANS_PATH))
                    .method("HEAD", HttpRequest.BodyPublishers.noBody())
                    .build()));
    for (HttpResponse<String> answer : answers) {
      assertEquals(
          Optional.of("1.1"),
          answer.headers().firstValue(HttpProtocol.PROTOCOL),
          answer.uri() + " " + answer.statusCode());
    }

    HttpResponse<String> two =
        send(
            HttpRequest.newBuilder(
                    sim.baseUrl()
                        .resolve(
                            "/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1"))
                .header(HttpProtocol.PROTOCOL, "2.0")
                .build());
    HttpResponse<String> later =
        send(
            HttpRequest.newBuilder(
                    sim.baseUrl()
                        .resolve(
                            "/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1"))
                .header(HttpProtocol.PROTOCOL, "1.7")
                .build());
    assertEquals(400, two.statusCode());
    assertEquals(200, later.statusCode(), "a later 1.x is served as 1.1");
  }

  @Test
  void aPlanNamesItsCurrencyAndALookupOfAnImpossibleKeyIsABadRequest() throws IOException {
    JsonNode plan = json(get("/v1/plans?job=j&accountId=a-1&cursor=c-1&businessDate=2026-11-29"));

    assertFalse(plan.get("nothingToDo").asBoolean());
    assertTrue(plan.get("currency").asText().matches("EUR|USD"), plan.toString());
    assertEquals(400, get("/v1/cleanups/" + "k".repeat(256)).statusCode());
  }

  /**
   * As a 1.0 server: no version header, no deadline, no currency in a plan, and a repeated key
   * compared on its whole body.
   */
  @Test
  void asA10ServerTheSimIgnoresTheDeadlineAndComparesWholeBodies() {
    sim.setProtocol(SimProtocol.V1_0);
    String past = HttpProtocol.formatDeadline(Instant.now().minusSeconds(1));
    String body10 = BODY.replace(",\"currency\":\"EUR\"", "");

    HttpResponse<String> plan =
        get("/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1");
    HttpResponse<String> applied = send(cleanup("fk-old", "1", past, body10, "application/json"));
    HttpResponse<String> replay = apply("fk-old", 1, body10);
    HttpResponse<String> redescribed = apply("fk-old", 1, body10.replace("\"d\"", "\"e\""));

    assertFalse(plan.body().contains("currency"), plan.body());
    assertEquals(201, applied.statusCode(), "a 1.0 server knows no deadline");
    assertEquals(200, replay.statusCode());
    assertEquals(422, redescribed.statusCode(), "every field counts at a 1.0 server");
    for (HttpResponse<String> answer : List.of(plan, applied, replay, redescribed)) {
      assertEquals(Optional.empty(), answer.headers().firstValue(HttpProtocol.PROTOCOL));
    }
  }

  @Test
  void theProtocolIsSetAtRunTimeFromThisMachineOnly() {
    HttpResponse<String> set = put("/admin/protocol", "{\"protocol\": \"1.0\"}");
    HttpResponse<String> wrong = put("/admin/protocol", "{\"protocol\": \"2.0\"}");

    assertEquals(200, set.statusCode(), set.body());
    assertEquals(SimProtocol.V1_0, sim.protocol());
    assertEquals(400, wrong.statusCode());
    assertTrue(wrong.body().contains("1.0 or 1.1"), wrong.body());
    assertEquals(SimProtocol.V1_0, sim.protocol(), "a refused change changes nothing");
    assertTrue(get("/admin/protocol").body().contains("\"1.0\""));
  }

  private HttpResponse<String> apply(String key, long token, String body) {
    return send(
        cleanup(
            key,
            Long.toString(token),
            HttpProtocol.formatDeadline(Instant.now().plusSeconds(60)),
            body,
            "application/json"));
  }

  private CompletableFuture<HttpResponse<String>> applyAsync(String key, long token, String body) {
    return CLIENT.sendAsync(
        cleanup(
            key,
            Long.toString(token),
            HttpProtocol.formatDeadline(Instant.now().plusSeconds(60)),
            body,
            "application/json"),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest cleanup(
      String key, String token, String deadline, String body, String contentType) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(sim.baseUrl().resolve(HttpProtocol.CLEANUPS_PATH))
            .timeout(DEADLINE)
            .header("Content-Type", contentType)
            .header(HttpProtocol.FENCING_TOKEN, token)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      request.header(HttpProtocol.IDEMPOTENCY_KEY, key);
    }
    if (deadline != null) {
      request.header(HttpProtocol.CLEANUP_DEADLINE, deadline);
    }
    return request.build();
  }

  private HttpResponse<String> get(String path) {
    return send(HttpRequest.newBuilder(sim.baseUrl().resolve(path)).timeout(DEADLINE).build());
  }

  private HttpResponse<String> put(String path, String body) {
    return send(
        HttpRequest.newBuilder(sim.baseUrl().resolve(path))
            .timeout(DEADLINE)
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(body))
            .build());
  }

  private static HttpResponse<String> send(HttpRequest request) {
    try {
      return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(request.method() + " " + request.uri(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static JsonNode json(HttpResponse<String> answer) {
    try {
      return HttpProtocol.json().readTree(answer.body());
    } catch (IOException e) {
      throw new UncheckedIOException(answer.body(), e);
    }
  }

  private static String error(HttpResponse<String> answer) {
    return json(answer).get("error").asText();
  }
}

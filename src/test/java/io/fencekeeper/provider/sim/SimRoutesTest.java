package io.fencekeeper.provider.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the sim answers, asked over real HTTP: which endpoint takes which method, the 400s of a
 * cleanup that cannot be admitted (and that they reserve nothing), how a key is read from a path,
 * the rate limit's reach, the faults a call meets, and the control endpoints kept to this machine.
 */
class SimRoutesTest {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final Duration DEADLINE = Duration.ofSeconds(20);

  private SimProviderServer sim;

  @BeforeEach
  void start() {
    sim = SimProviderServer.start(0, SimFaults.NONE, 3L);
  }

  @AfterEach
  void stop() {
    sim.close();
  }

  @Test
  void eachPathTakesOneMethodNamesItAndAWrongOneChangesNothing() {
    assertEquals(201, apply("fk-kept", 1).statusCode());
    List<List<String>> wrong =
        List.of(
            List.of("POST", "/v1/plans?accountId=a-1", "GET"),
            List.of("GET", "/v1/cleanups", "POST"),
            List.of("DELETE", "/v1/cleanups/fk-kept", "GET"),
            List.of("POST", "/ledger", "GET"),
            List.of("DELETE", "/admin/faults", "PUT"),
            List.of("POST", "/admin/stats", "GET"),
            List.of("GET", "/admin/reset", "POST"),
            List.of("POST", "/admin/lookups", "GET"));

    for (List<String> call : wrong) {
      HttpResponse<String> refused = call(call.get(0), call.get(1), null);
      assertEquals(405, refused.statusCode(), call.toString());
      assertEquals(call.get(2), refused.headers().firstValue("Allow").orElse(""), call.toString());
      assertTrue(refused.body().contains("\"error\":\"method_not_allowed\""), refused.body());
    }

    assertEquals(Map.of("fk-kept", 1), sim.effects(), "neither reset nor applied");
    assertEquals(1, sim.requests(), "a GET of /v1/cleanups is no cleanup request");
  }

  @Test
  void pathsBesideTheEndpointsAreNotFound() {
    for (String path : List.of("/", "/ledger/x", "/v1/plans/x", "/v1", "/admin/faults/x")) {
      HttpResponse<String> answer = call("GET", path, null);
      assertEquals(404, answer.statusCode(), path);
      assertTrue(answer.body().contains("\"error\":\"not_found\""), path + ": " + answer.body());
    }
  }

  @Test
  void aFirstCleanupIsCreatedAndARepeatIsAnsweredWithItMarkedReplayed() throws IOException {
    HttpResponse<String> created = apply("fk-twice", 1);
    HttpResponse<String> repeated = apply("fk-twice", 2);

    assertEquals(201, created.statusCode());
    assertTrue(created.headers().firstValue(HttpProtocol.IDEMPOTENT_REPLAYED).isEmpty());
    assertEquals(200, repeated.statusCode());
    assertEquals(
        "true", repeated.headers().firstValue(HttpProtocol.IDEMPOTENT_REPLAYED).orElseThrow());
    JsonNode first = json(created);
    JsonNode replay = json(repeated);
    assertEquals("APPLIED", first.get("status").asText());
    assertEquals("REPLAYED", replay.get("status").asText());
    assertEquals(first.get("effectId"), replay.get("effectId"));
  }

  @Test
  void theIdempotencyKeyMustHaveOneTo255Characters() {
    String longest = "k".repeat(255);

    HttpResponse<String> missing = call("POST", "/v1/cleanups", SimConnection.CLEANUP);
    HttpResponse<String> blank = apply(" ", 1);
    HttpResponse<String> tooLong = apply(longest + "k", 1);
    HttpResponse<String> fits = apply(longest, 1);

    for (HttpResponse<String> refused : List.of(missing, blank, tooLong)) {
      assertEquals(400, refused.statusCode());
      assertTrue(refused.body().contains("1-255 characters"), refused.body());
    }
    assertEquals(201, fits.statusCode(), fits.body());
    assertEquals(Map.of(longest, 1), sim.effects());
    assertEquals(4, sim.requests(), "a refused cleanup request is a request all the same");
  }

  @Test
  void aCleanupThatCannotBeReadIsABadRequestThatLeavesItsKeyFree() {
    HttpResponse<String> badToken = apply("fk-bad", "seven", SimConnection.CLEANUP);
    HttpResponse<String> badJson = apply("fk-bad", "1", "{\"accountId\":");
    HttpResponse<String> noAction = apply("fk-bad", "1", "{\"itemId\":\"i\",\"amountMinor\":1}");
    HttpResponse<String> noItem =
        apply("fk-bad", "1", "{\"action\":\"write-off-residual\",\"amountMinor\":1}");
    HttpResponse<String> textAmount =
        apply("fk-bad", "1", "{\"itemId\":\"i\",\"action\":\"a\",\"amountMinor\":\"1\"}");
    HttpResponse<String> lowerCurrency =
        apply(
            "fk-bad",
            "1",
            "{\"itemId\":\"i\",\"action\":\"a\",\"amountMinor\":1,\"currency\":\"eur\"}");
    HttpResponse<String> negativeToken = apply("fk-bad", "-1", SimConnection.CLEANUP);
    HttpResponse<String> notAnObject = apply("fk-bad", "1", "[1]");

    for (HttpResponse<String> refused :
        List.of(
            badToken,
            badJson,
            noAction,
            noItem,
            textAmount,
            lowerCurrency,
            negativeToken,
            notAnObject)) {
      assertEquals(400, refused.statusCode(), refused.body());
      assertTrue(refused.body().contains("invalid cleanup request"), refused.body());
    }
    assertTrue(
        noAction.body().contains("itemId and action (text) and amountMinor (a whole number)"),
        noAction.body());
    assertTrue(lowerCurrency.body().contains("ISO 4217"), lowerCurrency.body());
    assertEquals(Map.of(), sim.effects());
    assertEquals(201, apply("fk-bad", 1).statusCode(), "not key_in_use: nothing held the key");
  }

  @Test
  void aCleanupWhoseBodyBreaksOffAppliesNothingAndLeavesItsKeyFree() throws IOException {
    try (SimConnection connection = SimConnection.open(sim)) {
      connection.send(SimConnection.cleanupHead("fk-cut", "Content-Length: 500") + "{\"itemId\"");
      Await.until(DEADLINE, "the sim began the cleanup", () -> sim.requests() == 1);
    }

    Await.until(DEADLINE, "the cut-off cleanup is over", () -> sim.requestsInFlight() == 0);

    assertEquals(Map.of(), sim.effects());
    assertFalse(sim.inFlight("fk-cut"));
    assertEquals(201, apply("fk-cut", 1).statusCode());
  }

  /** The key is the rest of the path, percent-decoded: a '/' in it may come escaped or not. */
  @Test
  void aLookupReadsTheKeyFromTheWholeRestOfThePathDecoded() throws IOException {
    String key = "job/2026-11-29/a b";
    assertEquals(201, apply(key, 1).statusCode());

    HttpResponse<String> plain = call("GET", "/v1/cleanups/job/2026-11-29/a%20b", null);
    HttpResponse<String> escaped = call("GET", "/v1/cleanups/job%2F2026-11-29%2Fa%20b", null);
    HttpResponse<String> plus = call("GET", "/v1/cleanups/job/2026-11-29/a+b", null);

    assertEquals(200, plain.statusCode(), plain.body());
    assertEquals(key, json(plain).get("idempotencyKey").asText());
    assertEquals(200, escaped.statusCode(), escaped.body());
    assertEquals(key, json(escaped).get("idempotencyKey").asText());
    assertEquals(404, plus.statusCode(), "'+' in a path is a plus, not a space");
  }

  @Test
  void aPlanIsReadFromTheDecodedQueryAndTheLastOfARepeatedName() throws IOException {
    HttpResponse<String> plus = call("GET", "/v1/plans?accountId=a+b&cursor=c%2F1", null);
    HttpResponse<String> escaped = call("GET", "/v1/plans?accountId=a%20b&cursor=c/1", null);
    HttpResponse<String> repeated =
        call("GET", "/v1/plans?accountId=first&accountId=a%20b&cursor=c/1", null);
    HttpResponse<String> blank = call("GET", "/v1/plans?accountId=%20&cursor=c-1", null);

    assertEquals(200, plus.statusCode());
    assertTrue(json(plus).get("description").asText().contains("a b"), plus.body());
    assertEquals(json(plus), json(escaped), "the same item, however it is spelled");
    assertEquals(json(plus), json(repeated), "the last accountId counts");
    assertEquals(400, blank.statusCode());
    assertTrue(blank.body().contains("accountId is required"), blank.body());
  }

  @Test
  void theRateLimitHoldsEveryProviderCallButNotTheLedgerOrTheControl() {
    // one call a second's worth of burst, the next token 100 s away: nothing refills in a test
    sim.setFaults(SimFaults.NONE.withThrottlePerSecond(0.01));
    assertEquals(200, call("GET", "/v1/plans?accountId=a-1", null).statusCode());

    HttpResponse<String> lookup = call("GET", "/v1/cleanups/fk-limited", null);
    HttpResponse<String> cleanup = apply("fk-limited", 1);

    for (HttpResponse<String> throttled : List.of(lookup, cleanup)) {
      assertEquals(429, throttled.statusCode());
      assertTrue(throttled.body().contains("\"error\":\"throttled\""), throttled.body());
      assertTrue(throttled.headers().firstValue(HttpProtocol.RETRY_AFTER).isPresent());
    }
    for (String path : List.of("/ledger", "/admin/stats", "/admin/faults", "/admin/lookups")) {
      assertEquals(200, call("GET", path, null).statusCode(), path + " is not rate limited");
    }
    assertEquals(1, sim.requests(), "the throttled cleanup is counted");
    assertEquals(Map.of(), sim.lookups(), "the throttled lookup was never answered");
    sim.setFaults(SimFaults.NONE);
    assertEquals(201, apply("fk-limited", 1).statusCode(), "the throttled cleanup held no key");
  }

  @Test
  void aCallMeetsTheFaultsInForceWhenItArrivedNotThoseSetDuringItsDelay() throws Exception {
    sim.setFaults(SimFaults.NONE.withLatency(2_000, 0));
    CompletableFuture<HttpResponse<String>> delayed =
        CLIENT.sendAsync(
            cleanupRequest("fk-arrived", "1", SimConnection.CLEANUP),
            HttpResponse.BodyHandlers.ofString());
    Await.until(DEADLINE, "the cleanup is in its delay", () -> sim.inFlight("fk-arrived"));

    HttpResponse<String> put =
        call("PUT", "/admin/faults", "{\"errorRate\": 1.0, \"timeoutAfterAccept\": 1.0}");
    assumeTrue(sim.inFlight("fk-arrived"), "the faults changed while the cleanup waited");

    assertEquals(200, put.statusCode());
    HttpResponse<String> answer = delayed.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    assertEquals(201, answer.statusCode(), "no latency then, no error then: " + answer.body());
    assertEquals(Map.of("fk-arrived", 1), sim.effects());
    HttpResponse<String> later = call("GET", "/v1/plans?accountId=a-1", null);
    assertEquals(503, later.statusCode(), "a call arriving now meets the new faults");
  }

  /** A cleanup held without an answer was applied first: a retry meanwhile finds it applied. */
  @Test
  void aCleanupHeldWithoutAnAnswerIsAppliedBeforeTheSilence() throws IOException {
    sim.setFaults(SimFaults.NONE.withTimeoutAfterAccept(1.0, 60_000));
    try (SimConnection held = SimConnection.open(sim)) {
      held.send(SimConnection.cleanup("fk-held", SimConnection.CLEANUP));
      Await.until(DEADLINE, "the held cleanup is applied", () -> sim.effects().size() == 1);
      sim.setFaults(SimFaults.NONE);

      HttpResponse<String> lookup = call("GET", "/v1/cleanups/fk-held", null);
      HttpResponse<String> retry = apply("fk-held", 2);

      assertEquals(200, lookup.statusCode());
      assertEquals(200, retry.statusCode(), "a replay, not key_in_use: " + retry.body());
      assertEquals(json(lookup).get("effectId"), json(retry).get("effectId"));
      assertEquals(Map.of("fk-held", 1), sim.effects());
    }
  }

  @Test
  void aReadFailedOnPurposeIsNotCountedAsALookup() {
    sim.setFaults(SimFaults.NONE.withErrorRate(1.0));

    HttpResponse<String> failed = call("GET", "/v1/cleanups/fk-unlucky", null);

    assertEquals(503, failed.statusCode());
    assertTrue(failed.body().contains("simulated provider failure"), failed.body());
    assertEquals(Map.of(), sim.lookups());
    sim.setFaults(SimFaults.NONE);
    assertEquals(404, call("GET", "/v1/cleanups/fk-unlucky", null).statusCode());
    assertEquals(Map.of("fk-unlucky", 1L), sim.lookups(), "an answered miss is a lookup");
  }

  @Test
  void onlyProviderCallsAreCountedAsTraffic() {
    for (String path : List.of("/ledger", "/admin/stats", "/admin/faults", "/admin/lookups")) {
      call("GET", path, null);
    }
    assertEquals(Map.of(), sim.requestsPerSecond());
    assertEquals(0, sim.peakInFlight());

    call("GET", "/v1/plans?accountId=a-1", null);
    call("GET", "/no-such-path", null);

    assertEquals(1L, sim.requestsPerSecond().values().stream().mapToLong(Long::longValue).sum());
    assertEquals(1, sim.peakInFlight());
  }

  /**
   * Asked from this machine's own network address (not loopback), the control answers 403 and
   * changes nothing, while the provider protocol and the ledger answer as ever.
   */
  @Test
  void theControlAnswersOnlyOnLoopback() throws IOException {
    Optional<InetAddress> own = nonLoopbackAddress();
    assumeTrue(own.isPresent(), "this machine has a network address besides loopback");
    try (SimProviderServer remote =
        SimProviderServer.start(own.get().getHostAddress(), 0, SimFaults.NONE, 3L, 2)) {
      URI base = remote.baseUrl();
      assertEquals(201, apply(base, "fk-remote").statusCode());

      List<HttpResponse<String>> control =
          List.of(
              call(base, "GET", "/admin/faults", null),
              call(base, "PUT", "/admin/faults", "{\"errorRate\": 1.0}"),
              call(base, "POST", "/admin/reset", null),
              call(base, "DELETE", "/admin/effects/fk-remote", null),
              call(base, "GET", "/admin/stats", null));

      for (HttpResponse<String> refused : control) {
        assertEquals(403, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("\"error\":\"forbidden\""), refused.body());
      }
      assertEquals(SimFaults.NONE, remote.faults());
      assertEquals(Map.of("fk-remote", 1), remote.effects());
      assertEquals(200, call(base, "GET", "/ledger", null).statusCode());
      assertEquals(200, call(base, "GET", "/v1/cleanups/fk-remote", null).statusCode());
    }
  }

  private HttpResponse<String> apply(String key, long token) {
    return apply(key, Long.toString(token), SimConnection.CLEANUP);
  }

  private HttpResponse<String> apply(String key, String token, String body) {
    return send(cleanupRequest(key, token, body));
  }

  private HttpResponse<String> apply(URI base, String key) {
    return send(cleanupRequest(base, key, "1", SimConnection.CLEANUP));
  }

  private HttpRequest cleanupRequest(String key, String token, String body) {
    return cleanupRequest(sim.baseUrl(), key, token, body);
  }

  private static HttpRequest cleanupRequest(URI base, String key, String token, String body) {
    return request(base, "POST", HttpProtocol.CLEANUPS_PATH, body)
        .header(HttpProtocol.IDEMPOTENCY_KEY, key)
        .header(HttpProtocol.FENCING_TOKEN, token)
        .build();
  }

  private HttpResponse<String> call(String method, String path, String body) {
    return call(sim.baseUrl(), method, path, body);
  }

  private static HttpResponse<String> call(URI base, String method, String path, String body) {
    return send(request(base, method, path, body).build());
  }

  private static HttpRequest.Builder request(URI base, String method, String path, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(base.resolve(path))
            .timeout(DEADLINE)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    return body == null ? request : request.header("Content-Type", "application/json");
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

  private static JsonNode json(HttpResponse<String> answer) throws IOException {
    return HttpProtocol.json().readTree(answer.body());
  }

  private static Optional<InetAddress> nonLoopbackAddress() throws SocketException {
    return NetworkInterface.networkInterfaces()
        .flatMap(NetworkInterface::inetAddresses)
        .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
        .filter(a -> !a.isLinkLocalAddress())
        .findFirst();
  }
}

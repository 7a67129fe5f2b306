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
            List.of(
                "POST", "/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1", "GET"),
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

  /**
   * A path that is no endpoint is 404 {@code unknown_endpoint}, never {@code not_found}, which only
   * a lookup says ("no effect under this key"): a wrong path must not read as "not applied". Paths
   * match exactly: a trailing slash is another path.
   */
  @Test
  void pathsBesideTheEndpointsAreUnknownEndpointsNotNotFound() {
    for (String path :
        List.of("/", "/ledger/x", "/v1/plans/x", "/v1/plans/", "/v1", "/admin/faults/x")) {
      HttpResponse<String> answer = call("GET", path, null);
      assertEquals(404, answer.statusCode(), path);
      assertTrue(
          answer.body().contains("\"error\":\"unknown_endpoint\""), path + ": " + answer.body());
      assertEquals(Optional.of("1.1"), answer.headers().firstValue(HttpProtocol.PROTOCOL), path);
    }
    HttpResponse<String> trailing = call("POST", "/v1/cleanups/", SimConnection.CLEANUP);
    assertEquals(405, trailing.statusCode(), "/v1/cleanups/ is the lookup's path, without a key");
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

  /**
   * A key is exactly 1-255 characters of visible ASCII (0x21-0x7E): every such key is accepted (the
   * longest, and every visible character), anything else refused, so that every key a server
   * accepts can also be looked up.
   */
  @Test
  void theIdempotencyKeyIsOneTo255VisibleAsciiCharactersAndNothingElse() throws IOException {
    String longest = "k".repeat(255);
    StringBuilder visible = new StringBuilder();
    for (char c = 0x21; c <= 0x7e; c++) {
      visible.append(c);
    }

    HttpResponse<String> missing = call("POST", "/v1/cleanups", SimConnection.CLEANUP);
    HttpResponse<String> blank = apply(" ", 1);
    HttpResponse<String> space = apply("fk- x", 1);
    // the JDK's client writes a non-ASCII header as '?': the key's UTF-8 bytes go over a socket
    SimConnection.Answer accented;
    try (SimConnection raw = SimConnection.open(sim)) {
      accented =
          raw.send(SimConnection.cleanup("fk-\u00e9", SimConnection.CLEANUP)).next().orElseThrow();
    }
    HttpResponse<String> tooLong = apply(longest + "k", 1);
    HttpResponse<String> fits = apply(longest, 1);
    HttpResponse<String> everyVisible = apply(visible.toString(), 1);

    assertEquals(400, accented.status(), accented.body());
    for (HttpResponse<String> refused : List.of(missing, blank, space, tooLong)) {
      assertEquals(400, refused.statusCode(), refused.body());
      assertTrue(refused.body().contains("Idempotency-Key"), refused.body());
    }
    assertTrue(space.body().contains("visible ASCII"), space.body());
    assertEquals(201, fits.statusCode(), fits.body());
    assertEquals(201, everyVisible.statusCode(), everyVisible.body());
    assertEquals(Map.of(longest, 1, visible.toString(), 1), sim.effects());
    assertEquals(7, sim.requests(), "a refused cleanup request is a request all the same");
    String encoded =
        java.net.URLEncoder.encode(visible.toString(), java.nio.charset.StandardCharsets.UTF_8)
            .replace("+", "%20");
    assertEquals(
        200,
        call("GET", "/v1/cleanups/" + encoded, null).statusCode(),
        "every key accepted can be looked up");
  }

  @Test
  void aCleanupThatCannotBeReadIsABadRequestThatLeavesItsKeyFree() {
    String itemId = "\"itemId\":\"j/2026-11-29/a-1/c-1\"";
    HttpResponse<String> badToken = apply("fk-bad", "seven", SimConnection.CLEANUP);
    HttpResponse<String> badJson = apply("fk-bad", "1", "{\"accountId\":");
    HttpResponse<String> noAction = apply("fk-bad", "1", "{" + itemId + ",\"amountMinor\":1}");
    HttpResponse<String> noItem =
        apply("fk-bad", "1", "{\"action\":\"write-off-residual\",\"amountMinor\":1}");
    HttpResponse<String> textAmount =
        apply("fk-bad", "1", "{" + itemId + ",\"action\":\"a\",\"amountMinor\":\"1\"}");
    HttpResponse<String> lowerCurrency =
        apply(
            "fk-bad",
            "1",
            "{" + itemId + ",\"action\":\"a\",\"amountMinor\":1,\"currency\":\"eur\"}");
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
      assertTrue(refused.body().contains("\"error\":\"bad_request\""), refused.body());
    }
    assertTrue(badToken.body().contains("Fencing-Token"), badToken.body());
    assertTrue(noAction.body().contains("action is required"), noAction.body());
    assertTrue(noItem.body().contains("itemId is required"), noItem.body());
    assertTrue(textAmount.body().contains("amountMinor is required"), textAmount.body());
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

  /**
   * The key is one path segment, percent-decoded once: a '/' in it is {@code %2F}. A path of more
   * segments (an unencoded '/'), a trailing slash or a key that decodes outside visible ASCII is a
   * bad request, never "not found": none of them is a question about a key.
   */
  @Test
  void aLookupKeyIsOnePathSegmentDecodedOnce() throws IOException {
    String key = "job/2026-11-29/a+b";
    assertEquals(201, apply(key, 1).statusCode());

    HttpResponse<String> escaped = call("GET", "/v1/cleanups/job%2F2026-11-29%2Fa+b", null);
    HttpResponse<String> twice = call("GET", "/v1/cleanups/job%252F2026-11-29%252Fa+b", null);
    List<HttpResponse<String>> refused =
        List.of(
            call("GET", "/v1/cleanups/job/2026-11-29/a+b", null),
            call("GET", "/v1/cleanups/a/b", null),
            call("GET", "/v1/cleanups/fk-1/", null),
            call("GET", "/v1/cleanups/", null),
            call("GET", "/v1/cleanups/fk%20x", null),
            call("GET", "/v1/cleanups/fk%C3%A9", null),
            call("GET", "/v1/cleanups/" + "k".repeat(256), null));

    assertEquals(200, escaped.statusCode(), escaped.body());
    assertEquals(key, json(escaped).get("idempotencyKey").asText());
    assertEquals(404, twice.statusCode(), "decoded once: %252F is the text %2F");
    assertEquals("not_found", json(twice).get("error").asText());
    for (HttpResponse<String> answer : refused) {
      assertEquals(400, answer.statusCode(), answer.uri() + " " + answer.body());
      assertEquals("bad_request", json(answer).get("error").asText(), answer.uri().toString());
    }
  }

  /**
   * A plan request names an item: job, businessDate, accountId and cursor as an item has them,
   * percent-decoded ({@code +} a space, so a plus is {@code %2B}), the last of a repeated name; an
   * itemId and an idempotencyKey, when sent, the item's. Anything else is a bad request.
   */
  @Test
  void aPlanIsReadFromTheDecodedQueryAndNamesAnItem() throws IOException {
    String item = "job=j&businessDate=2026-11-29&";
    HttpResponse<String> plus =
        call("GET", "/v1/plans?" + item + "accountId=a%2Bb&cursor=c:1", null);
    HttpResponse<String> escaped =
        call("GET", "/v1/plans?" + item + "accountId=a%2bb&cursor=c%3A1", null);
    HttpResponse<String> repeated =
        call("GET", "/v1/plans?" + item + "accountId=first&accountId=a%2Bb&cursor=c:1", null);
    io.fencekeeper.item.ItemId id =
        io.fencekeeper.item.ItemId.of("j", java.time.LocalDate.parse("2026-11-29"), "a+b", "c:1");
    HttpResponse<String> tied =
        call(
            "GET",
            "/v1/plans?"
                + item
                + "accountId=a%2Bb&cursor=c:1&itemId=j%2F2026-11-29%2Fa%2Bb%2Fc%3A1&idempotencyKey="
                + id.idempotencyKey(),
            null);

    assertEquals(200, plus.statusCode(), plus.body());
    assertTrue(json(plus).get("description").asText().contains("a+b"), plus.body());
    assertEquals(json(plus), json(escaped), "the same item, however it is spelled");
    assertEquals(json(plus), json(repeated), "the last accountId counts");
    assertEquals(json(plus), json(tied), tied.body());
    Map<String, String> refusals =
        Map.of(
            "accountId=%20&cursor=c-1", "accountId is required",
            "accountId=a+b&cursor=c-1", "accountId is required",
            "accountId=a-1", "cursor is required",
            "accountId=a-1&cursor=c-1&businessDate=2026-02-30", "businessDate",
            "accountId=a-1&cursor=c-1&itemId=j%2F2026-11-29%2Fa-2%2Fc-1", "itemId",
            "accountId=a-1&cursor=c-1&idempotencyKey=fk-0", "idempotencyKey");
    for (var refusal : refusals.entrySet()) {
      String query =
          refusal.getKey().contains("businessDate")
              ? "job=j&" + refusal.getKey()
              : item + refusal.getKey();
      HttpResponse<String> answer = call("GET", "/v1/plans?" + query, null);
      assertEquals(400, answer.statusCode(), query);
      assertTrue(answer.body().contains(refusal.getValue()), query + ": " + answer.body());
    }
  }

  @Test
  void theRateLimitHoldsEveryProviderCallButNotTheLedgerOrTheControl() {
    // one call a second's worth of burst, the next token 100 s away: nothing refills in a test
    sim.setFaults(SimFaults.NONE.withThrottlePerSecond(0.01));
    assertEquals(
        200,
        call("GET", "/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1", null)
            .statusCode());

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
    HttpResponse<String> later =
        call("GET", "/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1", null);
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

    call("GET", "/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=a-1", null);
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

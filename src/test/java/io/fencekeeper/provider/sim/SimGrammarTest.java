package io.fencekeeper.provider.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.sim.SimConnection.Answer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The grammar of protocol 1.1 as the sim serves it (docs/provider-protocol.md, sections 1 to 6),
 * byte for byte over a raw connection: what it accepts, what it refuses with which status, code and
 * headers, and that a refusal changes nothing. Each test is one rule an implementer asked about.
 */
class SimGrammarTest {

  private static final String BODY =
      "{\"itemId\":\"j/2026-11-29/a-1/c-1\",\"job\":\"j\",\"businessDate\":\"2026-11-29\","
          + "\"accountId\":\"a-1\",\"cursor\":\"c-1\",\"action\":\"write-off-residual\","
          + "\"amountMinor\":100,\"currency\":\"EUR\",\"description\":\"d\"}";

  private SimProviderServer sim;

  @BeforeEach
  void start() {
    sim = SimProviderServer.start(0, SimFaults.NONE, 9L);
  }

  @AfterEach
  void stop() {
    sim.close();
  }

  /** A request head: the request line, then each header line. */
  private static String head(String requestLine, List<String> headers) {
    StringBuilder text = new StringBuilder(requestLine).append(" HTTP/1.1\r\nHost: localhost\r\n");
    headers.forEach(h -> text.append(h).append("\r\n"));
    return text.append("\r\n").toString();
  }

  /** The headers of a 1.1 cleanup with {@code key}, token 1, a deadline a minute ahead. */
  private static List<String> cleanupHeaders(String key) {
    return new ArrayList<>(
        List.of(
            "Content-Type: application/json",
            HttpProtocol.PROTOCOL + ": 1.1",
            HttpProtocol.IDEMPOTENCY_KEY + ": " + key,
            HttpProtocol.FENCING_TOKEN + ": 1",
            HttpProtocol.CLEANUP_DEADLINE
                + ": "
                + HttpProtocol.formatDeadline(Instant.now().plusSeconds(60))));
  }

  /** One request on a fresh connection, and its answer. */
  private Answer ask(String requestLine, List<String> headers, byte[] body) throws IOException {
    return ask(requestLine, headers, body, true);
  }

  private Answer ask(String requestLine, List<String> headers, byte[] body, boolean answerBody)
      throws IOException {
    List<String> all = new ArrayList<>(headers);
    if (body != null) {
      all.add("Content-Length: " + body.length);
    }
    try (SimConnection connection = SimConnection.open(sim)) {
      connection.send(head(requestLine, all));
      if (body != null) {
        connection.sendBytes(body);
      }
      return (answerBody ? connection.next() : connection.nextHead())
          .orElseThrow(() -> new IOException("no answer"));
    }
  }

  private Answer cleanup(List<String> headers, String body) throws IOException {
    return ask("POST /v1/cleanups", headers, body.getBytes(StandardCharsets.UTF_8));
  }

  private static void refused(Answer answer, int status, String code, String says) {
    assertEquals(status, answer.status(), answer.body());
    assertTrue(answer.body().contains("\"error\":\"" + code + "\""), answer.body());
    assertTrue(answer.body().contains(says), says + " in " + answer.body());
    assertEquals("1.1", answer.headers().get("fencekeeper-protocol"), answer.headers().toString());
  }

  /**
   * A request the HTTP layer cannot parse (a {@code %zz} in the path or the query, a transfer
   * coding other than chunked) is answered in the protocol's terms: a status of the closed list
   * (400), the envelope, the version, and the connection closed. As a 1.0 server, the same without
   * the version.
   */
  @Test
  void whatTheHttpLayerCannotParseIsABadRequestWithTheEnvelopeAndTheVersion() throws IOException {
    List<Answer> answers =
        List.of(
            ask("GET /v1/cleanups/%zz", List.of(), null),
            ask("GET /v1/plans?accountId=%zz", List.of(), null),
            ask("POST /v1/cleanups", List.of("Transfer-Encoding: gzip"), null),
            ask("GET /v1/plans?" + "x".repeat(9_000), List.of(), null));
    for (Answer answer : answers) {
      refused(answer, 400, HttpProtocol.BAD_REQUEST, "the request could not be read");
      assertEquals("close", answer.headers().get("connection"));
    }
    sim.setProtocol(SimProtocol.V1_0);
    Answer old = ask("GET /v1/cleanups/%zz", List.of(), null);
    assertEquals(400, old.status());
    assertTrue(old.body().contains("\"error\":\"bad_request\""), old.body());
    assertEquals(null, old.headers().get("fencekeeper-protocol"), "a 1.0 server sends none");
    assertEquals(Map.of(), sim.effects());
  }

  /**
   * One body, one reading. A member twice, an amount with a fraction or an exponent, a member this
   * document names with the wrong type, an itemId that is not an item's, parts that are not the
   * itemId's, a description over 1,000 characters or an action over 255: 400, and nothing applied.
   * {@code -0} is the integer 0.
   */
  @Test
  void aBodyIsReadOneWayAndAnythingElseIsABadRequest() throws IOException {
    Map<String, String> bodies =
        Map.of(
            BODY.replace("\"amountMinor\":100", "\"amountMinor\":100,\"amountMinor\":1"),
                "Duplicate field",
            BODY.replace(":100", ":100.0"), "amountMinor",
            BODY.replace(":100", ":1e2"), "amountMinor",
            BODY.replace("\"job\":\"j\"", "\"job\":5"), "job",
            BODY.replace("\"cursor\":\"c-1\"", "\"cursor\":\"c-9\""), "cursor",
            BODY.replace("j/2026-11-29/a-1/c-1", "   "), "itemId",
            BODY.replace("\"d\"", "\"" + "d".repeat(1_001) + "\""), "description",
            BODY.replace("write-off-residual", "a".repeat(256)), "action",
            BODY.replace("\"d\"", "5"), "description");
    int n = 0;
    for (var body : bodies.entrySet()) {
      refused(
          cleanup(cleanupHeaders("fk-" + n++), body.getKey()),
          400,
          HttpProtocol.BAD_REQUEST,
          body.getValue());
    }
    assertEquals(Map.of(), sim.effects());
    Answer zero =
        cleanup(
            cleanupHeaders("fk-zero"),
            BODY.replace(":100", ":-0").replace("\"d\"", "\"" + "d".repeat(1_000) + "\""));
    assertEquals(201, zero.status(), zero.body());
  }

  /** Body bytes that are not UTF-8 are not JSON of this protocol, whatever the label says. */
  @Test
  void aBodyThatIsNotUtf8IsABadRequestAndACharsetLabelChangesNothing() throws IOException {
    byte[] latin1 = BODY.replace("\"d\"", "\"caf\u00e9\"").getBytes(StandardCharsets.ISO_8859_1);
    List<String> labelled = cleanupHeaders("fk-latin");
    labelled.set(0, "Content-Type: application/json; charset=iso-8859-1");

    refused(ask("POST /v1/cleanups", labelled, latin1), 400, HttpProtocol.BAD_REQUEST, "UTF-8");
    Answer utf8 =
        ask(
            "POST /v1/cleanups",
            labelled,
            BODY.replace("\"d\"", "\"caf\u00e9\"").getBytes(StandardCharsets.UTF_8));
    assertEquals(201, utf8.status(), "the charset parameter is not read: " + utf8.body());
  }

  /**
   * The media type is {@code application/json} in any case, its parameters not read; none, or
   * another, is 415 (and the connection closes: the body was not read).
   */
  @Test
  void theMediaTypeIsApplicationJsonInAnyCaseAndNothingElse() throws IOException {
    List<String> upper = cleanupHeaders("fk-upper");
    upper.set(0, "Content-Type: APPLICATION/JSON; foo=bar");
    List<String> none = cleanupHeaders("fk-none");
    none.remove(0);
    List<String> text = cleanupHeaders("fk-text");
    text.set(0, "Content-Type: text/json");

    assertEquals(201, cleanup(upper, BODY).status());
    for (List<String> headers : List.of(none, text)) {
      Answer answer = cleanup(headers, BODY);
      refused(answer, 415, HttpProtocol.UNSUPPORTED_MEDIA_TYPE, "application/json");
      assertEquals("close", answer.headers().get("connection"));
    }
  }

  /**
   * Each header of the protocol at most once; a token without a leading zero; a version {@code
   * 1.x}; a 1.1 request carries a deadline, an instant of the one form, no further than 10 minutes
   * ahead. A request without a version (1.0) needs none.
   */
  @Test
  void theHeadersOfACleanupAreReadOneWay() throws IOException {
    Map<List<String>, String> refusals = new java.util.LinkedHashMap<>();
    List<String> twice = cleanupHeaders("fk-twice");
    twice.add(HttpProtocol.FENCING_TOKEN + ": 1");
    refusals.put(twice, "appears more than once");
    refusals.put(replaced("fk-zero", HttpProtocol.FENCING_TOKEN, "007"), "leading zero");
    for (String version : List.of("1", "01.1", "1.1.0", "1.01", "2.0")) {
      refusals.put(replaced("fk-v", HttpProtocol.PROTOCOL, version), "version 1.x");
    }
    List<String> noDeadline = cleanupHeaders("fk-nd");
    noDeadline.remove(4);
    refusals.put(noDeadline, "carries Cleanup-Deadline");
    for (String deadline :
        List.of(
            "2099-11-30T23:59:60Z",
            "2099-11-30t01:00:00z",
            "2099-11-30T01:00:00+00:00",
            HttpProtocol.formatDeadline(Instant.now().plusSeconds(20 * 60)))) {
      refusals.put(replaced("fk-d", HttpProtocol.CLEANUP_DEADLINE, deadline), "Cleanup-Deadline");
    }
    for (var refusal : refusals.entrySet()) {
      refused(cleanup(refusal.getKey(), BODY), 400, HttpProtocol.BAD_REQUEST, refusal.getValue());
    }
    List<String> asOneDotZero = cleanupHeaders("fk-10");
    asOneDotZero.remove(4); // no deadline
    asOneDotZero.remove(1); // no version: a 1.0 request
    assertEquals(201, cleanup(asOneDotZero, BODY).status(), "a 1.0 request needs no deadline");
    assertEquals(Map.of("fk-10", 1), sim.effects());
  }

  private static List<String> replaced(String key, String header, String value) {
    List<String> headers = cleanupHeaders(key);
    headers.replaceAll(h -> h.startsWith(header + ":") ? header + ": " + value : h);
    return headers;
  }

  /**
   * A query string on a cleanup or a lookup is not read, nor is Accept; HEAD and OPTIONS are
   * methods no endpoint takes (405).
   */
  @Test
  void aQueryOnACleanupAndAcceptAreNotReadAndHeadIsNoMethodOfTheProtocol() throws IOException {
    List<String> html = cleanupHeaders("fk-q");
    html.add("Accept: text/html");
    Answer applied =
        ask("POST /v1/cleanups?dryRun=true", html, BODY.getBytes(StandardCharsets.UTF_8));
    Answer found = ask("GET /v1/cleanups/fk-q?fields=all", List.of("Accept: text/html"), null);

    assertEquals(201, applied.status(), applied.body());
    assertEquals(200, found.status(), found.body());
    assertTrue(found.headers().get("content-type").startsWith("application/json"));
    for (String method : List.of("HEAD", "OPTIONS")) {
      Answer answer = ask(method + " /v1/plans", List.of(), null, !method.equals("HEAD"));
      assertEquals(405, answer.status(), method);
      assertEquals("GET", answer.headers().get("allow"), method);
    }
  }
}

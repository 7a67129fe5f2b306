package io.fencekeeper.provider.http;

import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderTestSupport;
import io.fencekeeper.provider.Receipt;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The client's classification table (docs/provider-protocol.md, "How Fencekeeper's client
 * classifies answers"), each row asked of a stub server that answers exactly what the row says,
 * over real HTTP; and what the client sends: the version, the deadline and the body of 1.1.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpClientClassificationTest {

  private static final Duration CONNECT = Duration.ofSeconds(2);
  private static final Duration REQUEST = Duration.ofSeconds(5);
  private static final ItemId ITEM = item("a-1");
  private static final Plan PLAN = Plan.action("write-off-residual", 1234, "EUR", "write off");
  private static final String RECEIPT =
      "{\"idempotencyKey\":\""
          + ITEM.idempotencyKey()
          + "\",\"effectId\":\"e-1\",\"status\":\"APPLIED\","
          + "\"appliedAt\":\"2026-11-30T01:02:03.004Z\"}";

  /** An answer: status line, headers, body. */
  record Stub(String status, List<String> headers, String body) {
    static Stub of(String status, String body, String... headers) {
      return new Stub(status, List.of(headers), body);
    }
  }

  /** A row of the table: an answer, and what it means on a cleanup and on a read. */
  record Row(Stub stub, Class<?> apply, Class<?> read) {}

  /** What the stub server received, each request's head. */
  private final List<String> received = new CopyOnWriteArrayList<>();

  /** The stub the shared server answers every request with, until changed. */
  private final AtomicReference<Stub> answer = new AtomicReference<>();

  private RawServer shared;
  private HttpProvider provider;

  @BeforeAll
  void start() throws IOException {
    shared = server(head -> answer.get());
    provider = HttpProvider.create(shared.baseUrl(), CONNECT, REQUEST);
  }

  @AfterAll
  void stop() {
    provider.close();
    shared.close();
  }

  private RawServer server(Function<String, Stub> answer) throws IOException {
    return new RawServer(
        (head, out) -> {
          received.add(head);
          Stub stub = answer.apply(head);
          byte[] body = stub.body().getBytes(StandardCharsets.UTF_8);
          List<String> headers = new ArrayList<>(stub.headers());
          headers.add("Content-Length: " + body.length);
          RawServer.head(out, stub.status(), headers.toArray(String[]::new));
          out.write(body);
          out.flush();
        });
  }

  private static Cleanup cleanup() {
    return new Cleanup(
        ITEM, PLAN, ITEM.idempotencyKey(), 7, Instant.parse("2026-11-30T01:02:13.004Z"));
  }

  /** The error an apply and a read (a lookup) get for {@code stub}. */
  private Map.Entry<ProviderError, ProviderError> classify(Stub stub) {
    answer.set(stub);
    return Map.entry(
        failure(provider.apply(cleanup())), failure(provider.lookup(ITEM, ITEM.idempotencyKey())));
  }

  private static final String JSON = "Content-Type: application/json";

  @Test
  void eachStatusAndCodeIsClassifiedAsTheTableSays() throws IOException {
    List<Row> table =
        List.of(
            row("400 Bad Request", "bad_request", ProviderError.Permanent.class),
            row("405 Method Not Allowed", "method_not_allowed", ProviderError.Permanent.class),
            row("408 Request Timeout", "request_timeout", ProviderError.Transient.class),
            row("409 Conflict", "key_in_use", ProviderError.Transient.class),
            row("409 Conflict", "deadline_passed", ProviderError.Transient.class),
            row("409 Conflict", "a_code_of_2031", ProviderError.Transient.class),
            row("413 Content Too Large", "payload_too_large", ProviderError.Permanent.class),
            row(
                "415 Unsupported Media Type",
                "unsupported_media_type",
                ProviderError.Permanent.class),
            row("422 Unprocessable Content", "key_reused", ProviderError.Permanent.class),
            row("418 I'm a teapot", "a_code_of_2031", ProviderError.Permanent.class),
            new Row(
                Stub.of("500 Internal Server Error", envelope("internal_error"), JSON),
                ProviderError.Ambiguous.class,
                ProviderError.Transient.class),
            new Row(
                Stub.of("503 Service Unavailable", envelope("unavailable"), JSON, "Retry-After: 1"),
                ProviderError.Ambiguous.class,
                ProviderError.Transient.class),
            new Row(
                Stub.of("302 Found", "", "Location: /elsewhere"),
                ProviderError.Ambiguous.class,
                ProviderError.Transient.class));
    for (Row row : table) {
      var errors = classify(row.stub());
      assertInstanceOf(row.apply(), errors.getKey(), row.stub() + " on a cleanup");
      assertInstanceOf(row.read(), errors.getValue(), row.stub() + " on a lookup");
    }
  }

  private static Row row(String status, String code, Class<?> both) {
    return new Row(Stub.of(status, envelope(code), JSON), both, both);
  }

  private static String envelope(String code) {
    return "{\"error\":\"" + code + "\",\"message\":\"m\"}";
  }

  /** A 409 whose body is not the envelope: nothing applied, retry with the same key and token. */
  @Test
  void aConflictWithoutAReadableEnvelopeIsNothingAppliedNotAStopOrAFailure() throws IOException {
    var html = classify(Stub.of("409 Conflict", "<html>busy</html>", "Content-Type: text/html"));
    var empty = classify(Stub.of("409 Conflict", ""));

    assertInstanceOf(ProviderError.Transient.class, html.getKey());
    assertInstanceOf(ProviderError.Transient.class, empty.getKey());
  }

  @Test
  void aStaleTokenStopsTheCallerWithBothTokens() throws IOException {
    var stale =
        classify(
            Stub.of(
                "409 Conflict",
                "{\"error\":\"stale_token\",\"message\":\"m\",\"presentedToken\":7,"
                    + "\"highestToken\":9}",
                JSON));

    assertEquals(new ProviderError.StaleToken(7, 9), stale.getKey());
  }

  @Test
  void aThrottledAnswerCarriesItsRetryAfter() throws IOException {
    var throttled =
        classify(
            Stub.of("429 Too Many Requests", envelope("throttled"), JSON, "Retry-After-Ms: 250"));

    assertEquals(
        Duration.ofMillis(250),
        assertInstanceOf(ProviderError.Throttled.class, throttled.getKey()).retryAfter());
    assertInstanceOf(ProviderError.Throttled.class, throttled.getValue());
  }

  /** 201 applied now, 200 a replay: the status decides, not the body's status or a header. */
  @Test
  void theStatusSaysWhetherACleanupWasAppliedOrReplayed() throws IOException {
    for (var expected :
        Map.of("201 Created", Receipt.APPLIED, "200 OK", Receipt.REPLAYED).entrySet()) {
      answer.set(Stub.of(expected.getKey(), RECEIPT, JSON));
      Receipt receipt = result(provider.apply(cleanup()));
      assertEquals(expected.getValue(), receipt.status(), expected.getKey());
      assertEquals("e-1", receipt.effectId());
    }
  }

  /** A 2xx the protocol does not give, or a receipt about something else, may hide an effect. */
  @Test
  void anAcceptedCleanupWhoseAnswerIsNotAReceiptForItsKeyIsAmbiguous() throws IOException {
    List<Stub> odd =
        List.of(
            Stub.of("202 Accepted", RECEIPT, JSON),
            Stub.of("201 Created", RECEIPT.replace(ITEM.idempotencyKey(), "fk-other"), JSON),
            Stub.of("201 Created", "{\"status\":\"APPLIED\"}", JSON),
            Stub.of("201 Created", "null", JSON));
    for (Stub stub : odd) {
      var errors = classify(stub);
      assertInstanceOf(ProviderError.Ambiguous.class, errors.getKey(), stub.toString());
    }
  }

  /**
   * The headers of 1.1, and 1.0's body with the currency added only when the plan has one: what a
   * 1.0 client would have sent, byte for byte, when it has none.
   */
  @Test
  void aCleanupCarriesTheVersionItsDeadlineAndA11Body() throws IOException {
    Plan without = Plan.action("void", 5, "d");
    int before = received.size();
    try (RawServer server = server(head -> Stub.of("201 Created", RECEIPT, JSON));
        HttpProvider fresh = HttpProvider.create(server.baseUrl(), CONNECT, REQUEST)) {
      result(fresh.apply(cleanup()));
      result(fresh.apply(new Cleanup(ITEM, without, ITEM.idempotencyKey(), 8, Instant.EPOCH)));
      ObjectNode sent = (ObjectNode) HttpProtocol.json().readTree(server.bodies.get(0));
      assertEquals("EUR", sent.remove("currency").asText());
      assertEquals(
          HttpProtocol.json().writeValueAsString(ProviderTestSupport.bodyOf10(ITEM, PLAN)),
          HttpProtocol.json().writeValueAsString(sent),
          "and 1.0's fields, in 1.0's order");
      assertEquals(
          HttpProtocol.json().writeValueAsString(ProviderTestSupport.bodyOf10(ITEM, without)),
          server.bodies.get(1),
          "a plan without a currency: exactly 1.0's body");
    }
    String head = received.get(before);
    assertTrue(head.startsWith("POST /v1/cleanups HTTP/1.1"), head);
    assertTrue(head.contains("Fencekeeper-Protocol: 1.1\r\n"), head);
    assertTrue(head.contains("Cleanup-Deadline: 2026-11-30T01:02:13.004Z\r\n"), head);
    assertTrue(head.contains("Fencing-Token: 7\r\n"), head);
    assertTrue(head.contains("Idempotency-Key: " + ITEM.idempotencyKey() + "\r\n"), head);
    assertTrue(received.get(before + 1).contains("Cleanup-Deadline: 1970-01-01T00:00:00.000Z\r\n"));
  }

  /**
   * What the client reads of a plan: a currency when there is one; a 1.0 plan without one; a plan
   * whose currency is not ISO 4217, or that names no action, is an answer it cannot read.
   */
  @Test
  void aPlanIsReadWithItsCurrencyOrWithoutOneFromA10Provider() throws IOException {
    Map<String, Optional<String>> plans =
        Map.of(
            "{\"nothingToDo\":false,\"action\":\"a\",\"amountMinor\":5,\"currency\":\"CHF\"}",
            Optional.of("CHF"),
            "{\"nothingToDo\":false,\"action\":\"a\",\"amountMinor\":5}",
            Optional.empty());
    for (var plan : plans.entrySet()) {
      answer.set(Stub.of("200 OK", plan.getKey(), JSON));
      assertEquals(plan.getValue(), Optional.ofNullable(result(provider.plan(ITEM)).currency()));
    }
    for (String unreadable :
        List.of(
            "{\"nothingToDo\":false,\"action\":\"a\",\"amountMinor\":5,\"currency\":\"eur\"}",
            "{\"nothingToDo\":false,\"amountMinor\":5,\"currency\":\"EUR\"}")) {
      answer.set(Stub.of("200 OK", unreadable, JSON));
      assertInstanceOf(ProviderError.Transient.class, failure(provider.plan(ITEM)), unreadable);
    }
  }

  /**
   * The client knows the version of the provider's last answer that was its own, and an ambiguous
   * cleanup at a provider that answers as 1.0 (or has not answered as 1.1 yet) says that the
   * deadline is not promised there. A proxy's page or an HTTP stack's bare error changes nothing.
   */
  @Test
  void theVersionOfTheAnswersIsReadAndAnAmbiguousCleanupAtA10ProviderSaysSo() throws IOException {
    try (RawServer old = server(head -> Stub.of("503 Service Unavailable", envelope("x"), JSON));
        RawServer proxy =
            server(head -> Stub.of("502 Bad Gateway", "<html/>", "Content-Type: text/html"));
        RawServer current =
            server(head -> Stub.of("502 Bad Gateway", "", "Fencekeeper-Protocol: 1.1"));
        HttpProvider atOld = HttpProvider.create(old.baseUrl(), CONNECT, REQUEST);
        HttpProvider behindProxy = HttpProvider.create(proxy.baseUrl(), CONNECT, REQUEST);
        HttpProvider atCurrent = HttpProvider.create(current.baseUrl(), CONNECT, REQUEST)) {
      assertNull(atOld.serverProtocol().orElse(null), "nothing answered yet");
      ProviderError oldAnswer = failure(atOld.apply(cleanup()));
      ProviderError proxyAnswer = failure(behindProxy.apply(cleanup()));
      ProviderError currentAnswer = failure(atCurrent.apply(cleanup()));

      assertEquals(Optional.of("1.0"), atOld.serverProtocol());
      assertEquals(Optional.empty(), behindProxy.serverProtocol(), "a proxy's page says nothing");
      assertEquals(Optional.of("1.1"), atCurrent.serverProtocol());
      assertTrue(oldAnswer.message().contains("protocol 1.0"), oldAnswer.message());
      assertTrue(
          proxyAnswer.message().contains("not yet answered as protocol 1.1"),
          proxyAnswer.message());
      assertTrue(!currentAnswer.message().contains("protocol 1."), currentAnswer.message());
    }
  }

  /**
   * One answer without the header (an HTTP stack's 400, a proxy's 502) does not make a 1.1 provider
   * a 1.0 one: its next ambiguous cleanup still counts on the deadline.
   */
  @Test
  void anAnswerWithoutTheVersionDoesNotDowngradeAProviderKnownAs11() throws IOException {
    List<Stub> answers =
        new CopyOnWriteArrayList<>(
            List.of(
                Stub.of("201 Created", RECEIPT, JSON, "Fencekeeper-Protocol: 1.1"),
                Stub.of("400 Bad Request", "Illegal request-target", "Content-Type: text/plain"),
                Stub.of("502 Bad Gateway", "<html/>", "Content-Type: text/html")));
    try (RawServer server =
            server(head -> answers.size() > 1 ? answers.remove(0) : answers.get(0));
        HttpProvider client = HttpProvider.create(server.baseUrl(), CONNECT, REQUEST)) {
      result(client.apply(cleanup()));
      failure(client.lookup(ITEM, ITEM.idempotencyKey()));
      ProviderError ambiguous = failure(client.apply(cleanup()));

      assertEquals(Optional.of("1.1"), client.serverProtocol());
      assertInstanceOf(ProviderError.Ambiguous.class, ambiguous);
      assertTrue(!ambiguous.message().contains("protocol 1."), ambiguous.message());
    }
  }

  /**
   * A lookup's 404 is "not applied" only as the protocol's not_found: from a provider known as 1.1
   * with its version header; a proxy's 404 page, a 404 of a path the provider does not know, or a
   * not_found without the header from a 1.1 provider is Transient (looked up again), never "apply
   * again".
   */
  @Test
  void onlyTheProtocolsNotFoundMakesALookupSayNotApplied() throws IOException {
    String notFound = envelope("not_found");
    List<Stub> answers =
        new CopyOnWriteArrayList<>(
            List.of(
                Stub.of("404 Not Found", notFound, JSON, "Fencekeeper-Protocol: 1.1"),
                Stub.of("404 Not Found", "<html>no such page</html>", "Content-Type: text/html"),
                Stub.of(
                    "404 Not Found",
                    envelope("unknown_endpoint"),
                    JSON,
                    "Fencekeeper-Protocol: 1.1"),
                Stub.of("404 Not Found", notFound, JSON)));
    try (RawServer server =
            server(head -> answers.size() > 1 ? answers.remove(0) : answers.get(0));
        HttpProvider client = HttpProvider.create(server.baseUrl(), CONNECT, REQUEST)) {
      assertEquals(Optional.empty(), result(client.lookup(ITEM, ITEM.idempotencyKey())));
      for (int i = 0; i < 3; i++) {
        assertInstanceOf(
            ProviderError.Transient.class, failure(client.lookup(ITEM, ITEM.idempotencyKey())));
      }
      assertEquals(Optional.of("1.1"), client.serverProtocol());
    }
  }

  /**
   * A plan request names the item by its parts and, from 1.1, by its id and its key; a plan is read
   * strictly: a description over 1,000 characters, an action over 255, an amount with a fraction or
   * as text, a member twice, or something to do without an amount are plans it cannot read. A plan
   * with nothing to do needs nothing more.
   */
  @Test
  void aPlanRequestNamesItsItemAndKeyAndAPlanIsReadStrictly() throws IOException {
    answer.set(Stub.of("200 OK", "{\"nothingToDo\":true}", JSON));
    int before = received.size();
    assertTrue(result(provider.plan(ITEM)).nothingToDo());
    String head = received.get(before);
    assertTrue(
        head.contains("itemId=" + ITEM.value().replace("/", "%2F"))
            || head.contains("itemId=" + ITEM.value()),
        head);
    assertTrue(head.contains("idempotencyKey=" + ITEM.idempotencyKey()), head);
    assertTrue(head.contains("accountId=a-1"), head);

    String something = "{\"nothingToDo\":false,\"action\":\"a\",\"currency\":\"EUR\",";
    answer.set(
        Stub.of(
            "200 OK",
            something + "\"amountMinor\":-0,\"description\":\"" + "d".repeat(1000) + "\"}",
            JSON));
    assertEquals(0, result(provider.plan(ITEM)).amountMinor(), "-0 is 0");
    for (String unreadable :
        List.of(
            something + "\"amountMinor\":5,\"description\":\"" + "d".repeat(1001) + "\"}",
            "{\"nothingToDo\":false,\"action\":\"" + "a".repeat(256) + "\",\"amountMinor\":5}",
            something + "\"amountMinor\":12.0}",
            something + "\"amountMinor\":1e3}",
            something + "\"amountMinor\":\"12\"}",
            something + "\"amountMinor\":12,\"amountMinor\":13}",
            "{\"nothingToDo\":false,\"action\":\"a\"}",
            "{\"nothingToDo\":\"false\",\"action\":\"a\",\"amountMinor\":5}")) {
      answer.set(Stub.of("200 OK", unreadable, JSON));
      assertInstanceOf(ProviderError.Transient.class, failure(provider.plan(ITEM)), unreadable);
    }
  }

  /**
   * A receipt's appliedAt is an instant of the protocol's one form (UTC, upper-case T and Z, no
   * leap second); anything else is a receipt the client cannot read: ambiguous on a cleanup. Its
   * status is not read.
   */
  @Test
  void aReceiptIsReadStrictlyAndItsStatusIsNotRead() throws IOException {
    String at = "2026-11-30T01:02:03.004Z";
    answer.set(Stub.of("201 Created", RECEIPT.replace(",\"status\":\"APPLIED\"", ""), JSON));
    assertEquals(Receipt.APPLIED, result(provider.apply(cleanup())).status(), "201 decides");
    for (String form :
        List.of(
            "2026-11-30t01:02:03.004z",
            "2026-11-30T01:02:03.004+00:00",
            "2026-11-30T23:59:60Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T01:02:03.0040000000Z")) {
      answer.set(Stub.of("201 Created", RECEIPT.replace(at, form), JSON));
      assertInstanceOf(ProviderError.Ambiguous.class, failure(provider.apply(cleanup())), form);
    }
  }
}

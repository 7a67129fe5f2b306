package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.http.HttpProtocol.json;
import static io.fencekeeper.provider.sim.SimTransport.HANG_UP;
import static io.fencekeeper.provider.sim.SimTransport.done;
import static io.fencekeeper.provider.sim.SimTransport.header;
import static io.fencekeeper.provider.sim.SimTransport.internalError;
import static io.fencekeeper.provider.sim.SimTransport.respond;
import static io.fencekeeper.provider.sim.SimTransport.rootMessage;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.EffectIdentity;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.ErrorBody;
import io.fencekeeper.provider.sim.SimFaultInjector.CleanupFate;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.stream.StreamSupport;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.RemoteAddress;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * What the sim answers: the provider protocol's endpoints (docs/provider-protocol.md) in the order
 * of checks it prescribes, with the faults {@link SimFaultInjector} decides, as a 1.1 or a 1.0
 * server ({@link SimProtocol}); {@code GET /ledger}, and the test control under {@code /admin/}
 * (loopback only).
 */
final class SimRoutes {

  static final String PROTOCOL_PATH = "/admin/protocol";

  private final SimTransport transport;
  private final SimLedger ledger;
  private final SimTraffic traffic;
  private final SimFaultInjector injector;
  private volatile SimProtocol protocol;
  private volatile Clock clock = Clock.systemUTC();

  SimRoutes(
      SimTransport transport,
      SimLedger ledger,
      SimTraffic traffic,
      SimFaultInjector injector,
      SimProtocol protocol) {
    this.transport = transport;
    this.ledger = ledger;
    this.traffic = traffic;
    this.injector = injector;
    this.protocol = protocol;
  }

  void useClock(Clock clock) {
    this.clock = clock;
  }

  SimProtocol protocol() {
    return protocol;
  }

  void setProtocol(SimProtocol protocol) {
    this.protocol = protocol;
  }

  /** A request the protocol refuses before it is processed: its answer. */
  private static final class Refusal extends RuntimeException {
    final transient HttpResponse answer;

    Refusal(int status, String code, String message) {
      super(message, null, false, false);
      this.answer = respond(status, ErrorBody.of(code, message));
    }

    static Refusal badRequest(String message) {
      return new Refusal(400, HttpProtocol.BAD_REQUEST, message);
    }
  }

  /**
   * An answer given before the request's body was read: the connection closes after it, so that
   * whatever of the body is still to come is never read as the next request.
   */
  private static HttpResponse closing(HttpResponse answer) {
    return answer.addHeader(Connection.create("close"));
  }

  /** The headers of the protocol that a request may carry once at most. */
  private static final List<String> ONCE =
      List.of(
          HttpProtocol.PROTOCOL,
          HttpProtocol.IDEMPOTENCY_KEY,
          HttpProtocol.FENCING_TOKEN,
          HttpProtocol.CLEANUP_DEADLINE);

  /** The headers of a cleanup, read and checked; {@code deadline} is null when there is none. */
  private record CleanupHeaders(String key, long token, Instant deadline) {}

  /**
   * One request: what it answers, or {@link SimTransport#HANG_UP}. A {@code /v1} request is in
   * flight from here until its answer (or hang-up) is decided, before a byte of it is written: a
   * caller never has its answer while the sim still counts its request, so one that starts its next
   * call at once is not counted twice.
   */
  CompletionStage<HttpResponse> handle(HttpRequest request) {
    String path = request.getUri().path();
    boolean providerCall = path.startsWith("/v1/");
    SimProtocol speaking = protocol;
    Runnable end = providerCall ? traffic.begin() : null;
    CompletionStage<HttpResponse> answer;
    try {
      answer = route(request, path, speaking);
    } catch (Refusal refusal) {
      answer = done(refusal.answer);
    } catch (RuntimeException e) {
      answer = done(internalError(e));
    }
    return answer.handle(
        (response, failure) -> {
          if (end != null) {
            end.run();
          }
          HttpResponse answered = failure != null ? internalError(failure) : response;
          // a 1.1 server says so on every answer it makes, on any path (a hang-up has none to
          // carry it; its HTTP layer's errors say so in SimParsingErrors)
          return speaking == SimProtocol.V1_1 && answered != HANG_UP
              ? answered.addHeader(PROTOCOL_1_1)
              : answered;
        });
  }

  private static final RawHeader PROTOCOL_1_1 =
      RawHeader.create(HttpProtocol.PROTOCOL, HttpProtocol.VERSION_1_1);

  void reset() {
    ledger.reset();
    traffic.reset();
  }

  private CompletionStage<HttpResponse> route(
      HttpRequest request, String path, SimProtocol speaking) {
    String method = request.method().value();
    if (path.equals(HttpProtocol.PLANS_PATH)) {
      return requireMethod(method, "GET", () -> onPlan(request, speaking));
    } else if (path.equals(HttpProtocol.CLEANUPS_PATH)) {
      return requireMethod(method, "POST", () -> onApply(request, speaking));
    } else if (path.startsWith(HttpProtocol.CLEANUPS_PATH + "/")) {
      return requireMethod(method, "GET", () -> onLookup(request, speaking));
    } else if (path.equals(HttpProtocol.GUARANTEES_PATH)) {
      return requireMethod(method, "GET", () -> done(onGuarantees(speaking)));
    } else if (path.equals("/ledger")) {
      return requireMethod(method, "GET", () -> done(onLedger()));
    } else if (path.startsWith("/admin/") && !fromLoopback(request)) {
      // fault knobs and the ledger reset are for the operator on this machine, never the network
      return done(
          respond(
              403, ErrorBody.of("forbidden", "/admin/* answers only on this machine (loopback)")));
    } else if (path.equals("/admin/faults")) {
      if (method.equals("GET")) {
        return done(respond(200, injector.faults()));
      }
      return requireMethod(method, "PUT", () -> onPutFaults(request));
    } else if (path.equals(PROTOCOL_PATH)) {
      if (method.equals("GET")) {
        return done(respond(200, Map.of("protocol", protocol.version())));
      }
      return requireMethod(method, "PUT", () -> onPutProtocol(request));
    } else if (path.equals("/admin/stats")) {
      return requireMethod(method, "GET", () -> done(onStats()));
    } else if (path.equals("/admin/reset")) {
      return requireMethod(
          method,
          "POST",
          () -> {
            reset();
            return done(HttpResponse.create().withStatus(204));
          });
    } else if (path.startsWith(SimTampering.EFFECTS_PATH)) {
      return done(SimTampering.effect(method, keyOf(request, SimTampering.EFFECTS_PATH), ledger));
    } else if (path.equals(SimTampering.LOOKUPS_PATH)) {
      return requireMethod(method, "GET", () -> done(SimTampering.lookups(ledger)));
    }
    // not not_found: that one says "no effect under this key", and only a lookup says it
    return done(
        respond(
            404,
            ErrorBody.of(
                HttpProtocol.UNKNOWN_ENDPOINT,
                "no such endpoint (paths are matched exactly, without a trailing slash)")));
  }

  private static CompletionStage<HttpResponse> requireMethod(
      String method, String expected, Supplier<CompletionStage<HttpResponse>> action) {
    if (method.equals(expected)) {
      return action.get();
    }
    return done(
        respond(
            405,
            ErrorBody.of(HttpProtocol.METHOD_NOT_ALLOWED, "use " + expected + " on this path"),
            RawHeader.create("Allow", expected)));
  }

  /**
   * The key of {@code /v1/cleanups/{key}} (or {@code /admin/effects/{key}}): the one path segment
   * after {@code prefix}, percent-decoded once (an encoded {@code /} is part of the key); empty
   * when the rest of the path is not exactly one segment ({@code /v1/cleanups/a/b}, a trailing
   * slash, nothing).
   */
  private static Optional<String> keyOf(HttpRequest request, String prefix) {
    String raw = request.getUri().path();
    String rest = raw.length() > prefix.length() ? raw.substring(prefix.length()) : "";
    if (rest.isEmpty() || rest.indexOf('/') >= 0) {
      return Optional.empty();
    }
    String key = null;
    for (String segment : request.getUri().pathSegments()) {
      key = segment; // the last one: the decoded form of rest
    }
    return Optional.ofNullable(key);
  }

  private static boolean fromLoopback(HttpRequest request) {
    return request
        .getAttribute(AttributeKeys.remoteAddress)
        .flatMap(RemoteAddress::getAddress)
        .map(InetAddress::isLoopbackAddress)
        .orElse(false);
  }

  /**
   * {@code GET /v1/plans}: (1) 400 for a request it cannot read (the version; {@code job}, {@code
   * businessDate}, {@code accountId} and {@code cursor} as an item has them; {@code itemId} and
   * {@code idempotencyKey}, when sent, the item's), (2) 429, then the delay, a simulated failure at
   * the error rate, and the plan.
   */
  private CompletionStage<HttpResponse> onPlan(HttpRequest request, SimProtocol speaking) {
    checkProtocol(request, speaking);
    Plan plan = planFor(planItem(request));
    Plan answered = speaking == SimProtocol.V1_0 ? withoutCurrency(plan) : plan;
    return throttledThenDelayed(() -> respond(200, answered));
  }

  /**
   * The item a plan request names (docs/provider-protocol.md, "Plans"): percent-decoded, {@code +}
   * a space, the last of a repeated name.
   */
  static ItemId planItem(HttpRequest request) {
    Map<String, String> query;
    try {
      query = request.getUri().query().toMap();
    } catch (RuntimeException e) {
      throw Refusal.badRequest("the query cannot be decoded");
    }
    String date = query.get("businessDate");
    LocalDate businessDate = date == null ? null : HttpProtocol.parseDate(date).orElse(null);
    if (businessDate == null) {
      throw Refusal.badRequest("businessDate is required: a date yyyy-MM-dd");
    }
    for (String part : List.of("job", "accountId", "cursor")) {
      if (!ItemId.isSegment(query.get(part))) {
        throw Refusal.badRequest(part + " is required: " + ItemId.SEGMENT_RULE);
      }
    }
    ItemId item =
        ItemId.of(query.get("job"), businessDate, query.get("accountId"), query.get("cursor"));
    String itemId = query.get("itemId");
    if (itemId != null && !itemId.equals(item.value())) {
      throw Refusal.badRequest("itemId is not job/businessDate/accountId/cursor of this request");
    }
    String key = query.get("idempotencyKey");
    if (key != null && !key.equals(item.idempotencyKey())) {
      throw Refusal.badRequest("idempotencyKey is not the key of this item");
    }
    return item;
  }

  /**
   * Deterministic from the item alone, so every node and every retry sees the same plan: one
   * account in ten (by String.hashCode, which the language specifies) has nothing to clean up, and
   * an account's residuals are in EUR or, for one account in four, in USD.
   */
  static Plan planFor(ItemId item) {
    return planFor(item.accountId(), item.cursor(), item.businessDate().toString());
  }

  static Plan planFor(String accountId, String cursor, String businessDate) {
    if (Math.floorMod(accountId.hashCode(), 10) == 0) {
      return Plan.nothing("account " + accountId + " is already reconciled");
    }
    long amountMinor =
        1 + Math.floorMod((accountId + "/" + cursor + "/" + businessDate).hashCode(), 99_999);
    String currency = Math.floorMod(accountId.hashCode(), 4) == 3 ? "USD" : "EUR";
    return Plan.action(
        "write-off-residual",
        amountMinor,
        currency,
        "write off a residual of "
            + amountMinor
            + " minor units on "
            + accountId
            + " at "
            + cursor);
  }

  /** A 1.0 server's plan: the same, without the currency 1.0 does not know. */
  private static Plan withoutCurrency(Plan plan) {
    return new Plan(
        plan.nothingToDo(), plan.action(), plan.amountMinor(), plan.description(), null);
  }

  /**
   * {@code GET /v1/cleanups/{key}}: (1) 400 for a path that is not one segment after the prefix or
   * a key that is not 1-255 characters of visible ASCII, (2) 429, then the delay, a simulated
   * failure at the error rate, and 200 with the effect or 404 {@code not_found}.
   */
  private CompletionStage<HttpResponse> onLookup(HttpRequest request, SimProtocol speaking) {
    checkProtocol(request, speaking);
    String key =
        keyOf(request, HttpProtocol.CLEANUPS_PATH + "/")
            .orElseThrow(
                () ->
                    Refusal.badRequest(
                        "the key is one path segment after /v1/cleanups/ (a '/' in it is %2F)"));
    if (!HttpProtocol.isKey(key)) {
      throw Refusal.badRequest(KEY_RULE);
    }
    return throttledThenDelayed(() -> lookedUp(key));
  }

  private static final String KEY_RULE =
      "the key must be 1-255 characters of visible ASCII (0x21-0x7E)";

  private HttpResponse lookedUp(String key) {
    Optional<Receipt> found = ledger.lookup(key);
    if (found.isPresent()) {
      return respond(200, found.get());
    }
    return respond(
        404, ErrorBody.of(HttpProtocol.NOT_FOUND, "no cleanup was applied under this key"));
  }

  /**
   * As a 1.1 server: a request that names another major version than 1, or something that is not a
   * version, is refused (a 1.x of any minor is served as 1.1), and so is one that repeats a header
   * of the protocol. The minor version the request speaks: 0 without the header. A 1.0 server does
   * not know the header.
   */
  private static int checkProtocol(HttpRequest request, SimProtocol speaking) {
    if (speaking == SimProtocol.V1_0) {
      return 0;
    }
    for (String name : ONCE) {
      long times =
          StreamSupport.stream(request.getHeaders().spliterator(), false)
              .filter(h -> h.name().equalsIgnoreCase(name))
              .count();
      if (times > 1) {
        throw Refusal.badRequest(name + " appears more than once");
      }
    }
    return HttpProtocol.minorVersion(header(request, HttpProtocol.PROTOCOL))
        .orElseThrow(
            () ->
                Refusal.badRequest(
                    HttpProtocol.PROTOCOL + " must name a version 1.x of the protocol (1.1)"));
  }

  /**
   * What the sim claims (docs/provider-protocol.md, "Guarantees"), as its fault knobs leave it: no
   * fencing with ignoreFencing, no keys when non-idempotent; a sim speaking 1.0 has no document.
   */
  private HttpResponse onGuarantees(SimProtocol speaking) {
    if (speaking != SimProtocol.V1_1) {
      return respond(404, ErrorBody.of(HttpProtocol.NOT_FOUND, "no such endpoint"));
    }
    SimFaults faults = injector.faults();
    return respond(
        200,
        Map.of(
            "protocol",
            HttpProtocol.VERSION_1_1,
            "fences",
            !faults.ignoreFencing(),
            "keepsKeys",
            !faults.nonIdempotent(),
            "honoursDeadline",
            true));
  }

  private HttpResponse onLedger() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("effects", ledger.effects());
    body.put("requests", ledger.requests());
    body.put("peakInFlight", traffic.peakInFlight());
    return respond(200, body);
  }

  /** The traffic as the provider measures it: in flight now, the peak, requests per second. */
  private HttpResponse onStats() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("inFlight", traffic.inFlight());
    body.put("peakInFlight", traffic.peakInFlight());
    Map<String, Long> perSecond = new LinkedHashMap<>();
    traffic.perSecond().forEach((second, count) -> perSecond.put(Long.toString(second), count));
    body.put("requestsPerSecond", perSecond);
    return respond(200, body);
  }

  private CompletionStage<HttpResponse> onPutProtocol(HttpRequest request) {
    return transport
        .body(request)
        .handle(
            (bytes, failure) -> {
              SimProtocol requested;
              try {
                JsonNode body = json().readTree(readable(bytes, failure));
                requested =
                    SimProtocol.parse(
                        body != null && body.path("protocol").isTextual()
                            ? body.get("protocol").asText()
                            : null);
              } catch (IOException | IllegalArgumentException e) {
                return respond(
                    400,
                    ErrorBody.of(
                        HttpProtocol.BAD_REQUEST,
                        "invalid protocol: " + rootMessage(e) + " ({\"protocol\": \"1.0\"})"));
              }
              protocol = requested;
              return respond(200, Map.of("protocol", requested.version()));
            });
  }

  private CompletionStage<HttpResponse> onPutFaults(HttpRequest request) {
    return transport
        .body(request)
        .handle(
            (bytes, failure) -> {
              SimFaults requested;
              try {
                requested = json().readValue(readable(bytes, failure), SimFaults.class);
              } catch (IOException | IllegalArgumentException e) {
                return respond(
                    400,
                    ErrorBody.of(HttpProtocol.BAD_REQUEST, "invalid faults: " + rootMessage(e)));
              }
              injector.setFaults(requested);
              return respond(200, requested);
            });
  }

  /**
   * {@code POST /v1/cleanups} in the order of docs/provider-protocol.md, "Order of checks": (1) the
   * request (415, the headers 400, the body 413, 408 or 400), (2) 429, then atomically for the key
   * (3) the fencing check, (4) the key in flight, (5) the stored effect; then the delay, during
   * which the key stays in flight, (6) the deadline, and (7) the effect: a simulated failure before
   * or after applying, or applied and answered (or not answered). Every request is counted.
   */
  private CompletionStage<HttpResponse> onApply(HttpRequest request, SimProtocol speaking) {
    ledger.countRequest();
    CleanupHeaders headers;
    try {
      headers = cleanupHeaders(request, speaking);
      checkMediaType(request);
    } catch (Refusal refusal) {
      return done(closing(refusal.answer));
    }
    // a body that cannot be read is refused like one that cannot be parsed, by why it failed
    return transport
        .body(request)
        .handle((bytes, failure) -> admitted(headers, bytes, failure, speaking))
        .thenCompose(answer -> answer);
  }

  /**
   * {@code application/json}, type and subtype in any case; its parameters are not read (RFC 8259
   * defines none, and the body is UTF-8 whatever a {@code charset} says). No Content-Type, or
   * another media type, is 415.
   */
  private static void checkMediaType(HttpRequest request) {
    var mediaType = request.entity().getContentType().mediaType();
    boolean json =
        mediaType.mainType().equalsIgnoreCase("application")
            && mediaType.subType().equalsIgnoreCase("json");
    if (!json) {
      throw new Refusal(
          415, HttpProtocol.UNSUPPORTED_MEDIA_TYPE, "a cleanup's body is application/json (UTF-8)");
    }
  }

  /**
   * The headers of a cleanup (docs/provider-protocol.md, "Headers"): the version, each header at
   * most once, the key (1-255 characters of visible ASCII), the token (decimal, no leading zero, 0
   * to 2^63-1) and, as a 1.1 server, the deadline: required from a request that declares 1.1 or
   * later, honoured whenever it is there, refused when it is more than 10 minutes ahead.
   */
  private CleanupHeaders cleanupHeaders(HttpRequest request, SimProtocol speaking) {
    int minor = checkProtocol(request, speaking);
    String key = header(request, HttpProtocol.IDEMPOTENCY_KEY);
    if (key == null) {
      throw Refusal.badRequest("the Idempotency-Key header is required");
    }
    if (!HttpProtocol.isKey(key.trim())) {
      throw Refusal.badRequest("Idempotency-Key: " + KEY_RULE);
    }
    String tokenHeader = header(request, HttpProtocol.FENCING_TOKEN);
    OptionalLong token = HttpProtocol.parseToken(tokenHeader == null ? null : tokenHeader.trim());
    if (token.isEmpty()) {
      throw Refusal.badRequest(
          "Fencing-Token must be a decimal number from 0 to 2^63-1 without a leading zero");
    }
    Instant deadline = null;
    String deadlineHeader = header(request, HttpProtocol.CLEANUP_DEADLINE);
    if (speaking == SimProtocol.V1_1 && deadlineHeader != null) {
      deadline =
          HttpProtocol.parseDeadline(deadlineHeader)
              .orElseThrow(
                  () ->
                      Refusal.badRequest(
                          "Cleanup-Deadline must be an RFC 3339 instant in UTC"
                              + " (2026-11-30T01:02:13.004Z)"));
      if (deadline.isAfter(clock.instant().plus(HttpProtocol.MAX_DEADLINE_AHEAD))) {
        throw Refusal.badRequest(
            "Cleanup-Deadline is more than "
                + HttpProtocol.MAX_DEADLINE_AHEAD.toMinutes()
                + " minutes ahead of the provider's clock");
      }
    } else if (speaking == SimProtocol.V1_1 && minor >= 1) {
      throw Refusal.badRequest(
          "a cleanup of protocol 1.1 carries Cleanup-Deadline (only a 1.0 request has none)");
    }
    return new CleanupHeaders(key.trim(), token.getAsLong(), deadline);
  }

  private CompletionStage<HttpResponse> admitted(
      CleanupHeaders headers, byte[] bytes, Throwable bodyFailure, SimProtocol speaking) {
    SimLedger.Request cleanup;
    try {
      cleanup = cleanupBody(readable(bytes, bodyFailure));
    } catch (SimTransport.BodyTooLarge e) {
      return done(respond(413, ErrorBody.of(HttpProtocol.PAYLOAD_TOO_LARGE, rootMessage(e))));
    } catch (SimTransport.BodyTooSlow e) {
      return done(
          closing(respond(408, ErrorBody.of(HttpProtocol.REQUEST_TIMEOUT, rootMessage(e)))));
    } catch (IOException | IllegalArgumentException e) {
      return done(
          respond(
              400,
              ErrorBody.of(
                  HttpProtocol.BAD_REQUEST, "invalid cleanup request: " + rootMessage(e))));
    }
    Optional<HttpResponse> throttled = throttled();
    if (throttled.isPresent()) {
      return done(throttled.get());
    }
    SimFaults current = injector.faults();
    SimLedger.Admission admission =
        ledger.admit(headers.key(), headers.token(), cleanup, current, speaking);
    // the key stays in flight through the delay, which is what makes a concurrent repeat a 409
    return afterDelay(current, () -> finishApply(headers, cleanup, admission, current));
  }

  /**
   * The body as 1.1 requires it (docs/provider-protocol.md, "Cleanups"): a JSON object in UTF-8, no
   * member twice; {@code itemId} an item's id, {@code action} text of 1-255 characters, {@code
   * amountMinor} an integer of 64 bits, {@code currency} ISO 4217's shape when present; {@code
   * job}, {@code businessDate}, {@code accountId} and {@code cursor} the itemId's parts when
   * present, {@code description} text of at most 1,000 characters when present. Any other member is
   * the caller's business and ignored, but kept for a 1.0 server's whole-body comparison.
   */
  static SimLedger.Request cleanupBody(byte[] bytes) throws IOException {
    JsonNode body = HttpProtocol.readJson(bytes);
    if (body == null || !body.isObject()) {
      throw new IllegalArgumentException("the body must be a JSON object");
    }
    JsonNode itemId = body.path("itemId");
    ItemId item;
    try {
      item = ItemId.parse(itemId.isTextual() ? itemId.asText() : null);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "itemId is required: job/businessDate/accountId/cursor (" + e.getMessage() + ")");
    }
    JsonNode action = body.path("action");
    JsonNode amount = body.path("amountMinor");
    if (!action.isTextual() || !HttpProtocol.isAction(action.asText())) {
      throw new IllegalArgumentException("action is required: text of 1-255 characters");
    }
    if (!amount.isIntegralNumber() || !amount.canConvertToLong()) {
      throw new IllegalArgumentException(
          "amountMinor is required: an integer of 64 bits, without fraction or exponent");
    }
    JsonNode currency = body.path("currency");
    if (!absent(currency) && !(currency.isTextual() && Plan.isCurrency(currency.asText()))) {
      throw new IllegalArgumentException(
          "currency must be an ISO 4217 code of three upper-case letters");
    }
    Map<String, String> parts =
        Map.of(
            "job", item.job(),
            "businessDate", item.businessDate().toString(),
            "accountId", item.accountId(),
            "cursor", item.cursor());
    for (var part : parts.entrySet()) {
      JsonNode member = body.path(part.getKey());
      if (!absent(member) && !(member.isTextual() && member.asText().equals(part.getValue()))) {
        throw new IllegalArgumentException(part.getKey() + " must be the itemId's, as text");
      }
    }
    JsonNode description = body.path("description");
    if (!absent(description)
        && !(description.isTextual() && HttpProtocol.isDescription(description.asText()))) {
      throw new IllegalArgumentException("description must be text of at most 1,000 characters");
    }
    return new SimLedger.Request(
        new EffectIdentity(
            item.value(),
            action.asText(),
            amount.asLong(),
            currency.isTextual() ? currency.asText() : null),
        body);
  }

  /** A member that is not there: missing, or {@code null}, which is the same. */
  private static boolean absent(JsonNode member) {
    return member.isMissingNode() || member.isNull();
  }

  private CompletionStage<HttpResponse> finishApply(
      CleanupHeaders headers,
      SimLedger.Request request,
      SimLedger.Admission admission,
      SimFaults current) {
    if (admission instanceof SimLedger.Admission.Refused refused) {
      return done(respond(refused.status(), refused.body()));
    }
    if (admission instanceof SimLedger.Admission.Replay replay) {
      return done(
          respond(200, replay.first(), RawHeader.create(HttpProtocol.IDEMPOTENT_REPLAYED, "true")));
    }
    String key = headers.key();
    if (headers.deadline() != null && !clock.instant().isBefore(headers.deadline())) {
      // step 6: nothing is applied at or after the deadline by the sim's clock
      ledger.abandon(key);
      return done(
          respond(
              409,
              ErrorBody.of(
                  HttpProtocol.DEADLINE_PASSED,
                  "the Cleanup-Deadline passed before the cleanup could commit; nothing was"
                      + " applied")));
    }
    CleanupFate fate = injector.cleanupFate(current);
    if (fate instanceof CleanupFate.Failed failed) {
      if (failed.applied()) {
        ledger.apply(key, request);
      } else {
        ledger.abandon(key);
      }
      return done(simulatedFailure());
    }
    Receipt outcome = ledger.apply(key, request);
    if (fate instanceof CleanupFate.Unanswered unanswered) {
      return unanswered.holdMs() == 0
          ? done(HANG_UP)
          : transport.later(unanswered.holdMs(), () -> done(HANG_UP));
    }
    return done(respond(201, outcome));
  }

  /** The GET endpoints: throttle, delay, then a 5xx at the error rate (nothing is applied). */
  private CompletionStage<HttpResponse> throttledThenDelayed(Supplier<HttpResponse> action) {
    Optional<HttpResponse> throttled = throttled();
    if (throttled.isPresent()) {
      return done(throttled.get());
    }
    SimFaults current = injector.faults();
    return afterDelay(
        current, () -> done(injector.readFails(current) ? simulatedFailure() : action.get()));
  }

  /** The 429 of the rate limit, if the call is beyond it, or of throttling at random. */
  private Optional<HttpResponse> throttled() {
    return injector
        .throttle()
        .map(
            refusal ->
                respond(
                    429,
                    ErrorBody.of(HttpProtocol.THROTTLED, refusal.reason()),
                    RawHeader.create(
                        HttpProtocol.RETRY_AFTER, Long.toString(refusal.retryAfterSeconds())),
                    RawHeader.create(
                        HttpProtocol.RETRY_AFTER_MS, Long.toString(refusal.waitMillis()))));
  }

  private CompletionStage<HttpResponse> afterDelay(
      SimFaults current, Supplier<CompletionStage<HttpResponse>> action) {
    long delay = injector.delayMs(current);
    return delay == 0 ? action.get() : transport.later(delay, action);
  }

  private static HttpResponse simulatedFailure() {
    return respond(503, ErrorBody.of(HttpProtocol.UNAVAILABLE, "simulated provider failure"));
  }

  /** The body's bytes, or the reason they could not be read as an {@link IOException}. */
  private static byte[] readable(byte[] bytes, Throwable failure) throws IOException {
    if (failure == null) {
      return bytes;
    }
    Throwable cause = SimTransport.unwrap(failure);
    throw cause instanceof IOException io ? io : new IOException(cause.toString(), cause);
  }
}

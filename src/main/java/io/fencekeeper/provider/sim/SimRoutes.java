package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.http.HttpProtocol.json;
import static io.fencekeeper.provider.sim.SimTransport.HANG_UP;
import static io.fencekeeper.provider.sim.SimTransport.done;
import static io.fencekeeper.provider.sim.SimTransport.header;
import static io.fencekeeper.provider.sim.SimTransport.internalError;
import static io.fencekeeper.provider.sim.SimTransport.respond;
import static io.fencekeeper.provider.sim.SimTransport.rootMessage;

import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.CleanupRequest;
import io.fencekeeper.provider.http.HttpProtocol.ErrorBody;
import io.fencekeeper.provider.sim.SimFaultInjector.CleanupFate;
import java.io.IOException;
import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.RemoteAddress;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * What the sim answers: the provider protocol's endpoints (docs/provider-protocol.md) with the
 * faults {@link SimFaultInjector} decides, {@code GET /ledger}, and the test control under {@code
 * /admin/} (loopback only).
 */
final class SimRoutes {

  private final SimTransport transport;
  private final SimLedger ledger;
  private final SimTraffic traffic;
  private final SimFaultInjector injector;

  SimRoutes(
      SimTransport transport, SimLedger ledger, SimTraffic traffic, SimFaultInjector injector) {
    this.transport = transport;
    this.ledger = ledger;
    this.traffic = traffic;
    this.injector = injector;
  }

  /**
   * One request: what it answers, or {@link SimTransport#HANG_UP}. A {@code /v1} request is in
   * flight from here until its answer (or hang-up) is decided, before a byte of it is written: a
   * caller never has its answer while the sim still counts its request, so one that starts its next
   * call at once is not counted twice.
   */
  CompletionStage<HttpResponse> handle(HttpRequest request) {
    String path = request.getUri().path();
    Runnable end = path.startsWith("/v1/") ? traffic.begin() : null;
    CompletionStage<HttpResponse> answer;
    try {
      answer = route(request, path);
    } catch (RuntimeException e) {
      answer = done(internalError(e));
    }
    return answer.handle(
        (response, failure) -> {
          if (end != null) {
            end.run();
          }
          return failure != null ? internalError(failure) : response;
        });
  }

  void reset() {
    ledger.reset();
    traffic.reset();
  }

  private CompletionStage<HttpResponse> route(HttpRequest request, String path) {
    String method = request.method().value();
    if (path.equals(HttpProtocol.PLANS_PATH)) {
      return requireMethod(method, "GET", () -> throttledThenDelayed(() -> onPlan(request)));
    } else if (path.equals(HttpProtocol.CLEANUPS_PATH)) {
      return requireMethod(method, "POST", () -> onApply(request));
    } else if (path.startsWith(HttpProtocol.CLEANUPS_PATH + "/")) {
      String key = lookupKey(request);
      return requireMethod(method, "GET", () -> throttledThenDelayed(() -> onLookup(key)));
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
      return done(SimTampering.effect(method, lookupKey(request), ledger));
    } else if (path.equals(SimTampering.LOOKUPS_PATH)) {
      return requireMethod(method, "GET", () -> done(SimTampering.lookups(ledger)));
    }
    return done(respond(404, ErrorBody.of(HttpProtocol.NOT_FOUND, "no such endpoint")));
  }

  private static CompletionStage<HttpResponse> requireMethod(
      String method, String expected, Supplier<CompletionStage<HttpResponse>> action) {
    if (method.equals(expected)) {
      return action.get();
    }
    return done(
        respond(
            405,
            ErrorBody.of("method_not_allowed", "use " + expected + " on this path"),
            RawHeader.create("Allow", expected)));
  }

  /**
   * The key: the rest of the path after {@code /v1/cleanups/} (or {@code /admin/effects/}),
   * percent-decoded.
   */
  private static String lookupKey(HttpRequest request) {
    StringBuilder key = new StringBuilder();
    int index = 0;
    for (String segment : request.getUri().pathSegments()) {
      if (index++ < 2) {
        continue; // "v1", "cleanups" (or "admin", "effects")
      }
      if (key.length() > 0) {
        key.append('/');
      }
      key.append(segment);
    }
    return key.toString();
  }

  private static boolean fromLoopback(HttpRequest request) {
    return request
        .getAttribute(AttributeKeys.remoteAddress)
        .flatMap(RemoteAddress::getAddress)
        .map(InetAddress::isLoopbackAddress)
        .orElse(false);
  }

  private HttpResponse onPlan(HttpRequest request) {
    // percent-decoded, '+' as a space (as URLEncoder writes it), the last of a repeated name
    Map<String, String> query = request.getUri().query().toMap();
    String accountId = query.get("accountId");
    if (accountId == null || accountId.isBlank()) {
      return respond(400, ErrorBody.of(HttpProtocol.BAD_REQUEST, "accountId is required"));
    }
    return respond(
        200,
        planFor(
            accountId, query.getOrDefault("cursor", ""), query.getOrDefault("businessDate", "")));
  }

  /**
   * Deterministic from the account alone, so every node and every retry sees the same plan: one
   * account in ten (by String.hashCode, which the language specifies) has nothing to clean up.
   */
  static Plan planFor(String accountId, String cursor, String businessDate) {
    if (Math.floorMod(accountId.hashCode(), 10) == 0) {
      return Plan.nothing("account " + accountId + " is already reconciled");
    }
    long amountMinor =
        1 + Math.floorMod((accountId + "/" + cursor + "/" + businessDate).hashCode(), 99_999);
    return Plan.action(
        "write-off-residual",
        amountMinor,
        "write off a residual of "
            + amountMinor
            + " minor units on "
            + accountId
            + " at "
            + cursor);
  }

  private HttpResponse onLookup(String key) {
    Optional<Receipt> found = ledger.lookup(key);
    if (found.isPresent()) {
      return respond(200, found.get());
    }
    return respond(
        404, ErrorBody.of(HttpProtocol.NOT_FOUND, "no cleanup was applied under this key"));
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

  private CompletionStage<HttpResponse> onApply(HttpRequest request) {
    ledger.countRequest();
    Optional<HttpResponse> throttled = throttled();
    if (throttled.isPresent()) {
      return done(throttled.get());
    }
    String key = header(request, HttpProtocol.IDEMPOTENCY_KEY);
    if (key == null || key.isBlank() || key.length() > 255) {
      return done(
          respond(
              400,
              ErrorBody.of(
                  HttpProtocol.BAD_REQUEST,
                  "Idempotency-Key header is required (1-255 characters)")));
    }
    // a body that cannot be read is the same 400 as one that cannot be parsed
    return transport
        .body(request)
        .handle((bytes, failure) -> admitted(request, key, bytes, failure))
        .thenCompose(answer -> answer);
  }

  private CompletionStage<HttpResponse> admitted(
      HttpRequest request, String key, byte[] bytes, Throwable bodyFailure) {
    Long token;
    CleanupRequest cleanup;
    try {
      String tokenHeader = header(request, HttpProtocol.FENCING_TOKEN);
      token = tokenHeader == null ? null : Long.parseLong(tokenHeader.trim());
      cleanup = json().readValue(readable(bytes, bodyFailure), CleanupRequest.class);
      if (cleanup == null || cleanup.accountId() == null || cleanup.action() == null) {
        throw new IllegalArgumentException("accountId and action are required");
      }
    } catch (IOException | IllegalArgumentException e) {
      return done(
          respond(
              400,
              ErrorBody.of(
                  HttpProtocol.BAD_REQUEST, "invalid cleanup request: " + rootMessage(e))));
    }
    SimFaults current = injector.faults();
    SimLedger.Admission admission = ledger.admit(key, token, cleanup, current);
    // the key stays in flight through the delay, which is what makes a concurrent repeat a 409
    return afterDelay(current, () -> finishApply(key, cleanup, admission, current));
  }

  private CompletionStage<HttpResponse> finishApply(
      String key, CleanupRequest request, SimLedger.Admission admission, SimFaults current) {
    if (admission instanceof SimLedger.Admission.Refused refused) {
      return done(respond(refused.status(), refused.body()));
    }
    if (admission instanceof SimLedger.Admission.Replay replay) {
      return done(
          respond(200, replay.first(), RawHeader.create(HttpProtocol.IDEMPOTENT_REPLAYED, "true")));
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
    return respond(503, ErrorBody.of(HttpProtocol.INTERNAL_ERROR, "simulated provider failure"));
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

package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.http.HttpProtocol.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.CleanupRequest;
import io.fencekeeper.provider.http.HttpProtocol.ErrorBody;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;

/**
 * The simulated payment provider: the provider protocol (docs/provider-protocol.md) served by a
 * real HTTP server, with a ledger that counts effects per key and the fault knobs of {@link
 * SimFaults}. Runs in-process (the embedded default, tests) or as its own process ({@link
 * SimProviderCommand}).
 *
 * <p>Delays never block a request thread: a delayed request is parked on a scheduler and resumed on
 * the bounded request pool, so a slow provider with many callers stays cheap to simulate.
 */
public final class SimProviderServer implements AutoCloseable {

  static {
    // the JDK server writes headers and body separately; without TCP_NODELAY every response
    // waits out the client's delayed ACK (~40 ms), which measured 88 ms per plan+apply
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  private static final int MAX_BODY_BYTES = 64 * 1024;
  private static final String JSON_TYPE = "application/json";

  /**
   * What ends each {@code /v1} request's time in flight ({@link SimTraffic}), by exchange (the JDK
   * server's exchange attributes are shared by every exchange of a context).
   */
  private static final Map<HttpExchange, Runnable> END_OF_REQUEST = new ConcurrentHashMap<>();

  private final HttpServer server;
  private final ExecutorService requestPool;
  private final ScheduledThreadPoolExecutor scheduler;
  private final RandomGenerator random;
  private final SimLedger ledger = new SimLedger();
  private final SimTraffic traffic = new SimTraffic(System::currentTimeMillis);
  private volatile SimFaults faults;
  private volatile TokenBucket throttle;

  private SimProviderServer(
      HttpServer server,
      ExecutorService requestPool,
      ScheduledThreadPoolExecutor scheduler,
      SimFaults faults,
      long seed) {
    this.server = server;
    this.requestPool = requestPool;
    this.scheduler = scheduler;
    // java.util.Random is thread-safe and seedable: a run with the same seed draws the same faults
    this.random = new Random(seed);
    setFaults(faults);
  }

  /** Starts on {@code 127.0.0.1:port} (0 picks a free port) without faults. */
  public static SimProviderServer start(int port) {
    return start("127.0.0.1", port, SimFaults.NONE, 1L, 16);
  }

  public static SimProviderServer start(int port, SimFaults faults, long seed) {
    return start("127.0.0.1", port, faults, seed, 16);
  }

  public static SimProviderServer start(
      String host, int port, SimFaults faults, long seed, int threads) {
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(host, port), 128);
    } catch (IOException e) {
      throw new UncheckedIOException("sim provider cannot listen on " + host + ":" + port, e);
    }
    ExecutorService requestPool =
        Executors.newFixedThreadPool(Math.max(1, threads), daemonThreads("sim-provider-request"));
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(1, daemonThreads("sim-provider-delay"));
    scheduler.setRemoveOnCancelPolicy(true);
    SimProviderServer sim = new SimProviderServer(server, requestPool, scheduler, faults, seed);
    server.setExecutor(requestPool);
    server.createContext("/", sim::guarded);
    server.start();
    return sim;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  public URI baseUrl() {
    return URI.create(
        "http://" + server.getAddress().getAddress().getHostAddress() + ":" + port() + "/");
  }

  public SimFaults faults() {
    return faults;
  }

  public void setFaults(SimFaults faults) {
    TokenBucket current = throttle;
    if (faults.throttlePerSecond() == 0) {
      throttle = null;
    } else if (current == null || current.ratePerSecond() != faults.throttlePerSecond()) {
      throttle = new TokenBucket(faults.throttlePerSecond(), System::nanoTime);
    }
    this.faults = faults;
  }

  /** Effects actually applied per idempotency key, as {@code GET /ledger} reports them. */
  public Map<String, Integer> effects() {
    return ledger.effects();
  }

  /** Cleanup requests received, whatever their answer. */
  public long requests() {
    return ledger.requests();
  }

  /** {@code /v1} requests in flight right now. */
  public int requestsInFlight() {
    return traffic.inFlight();
  }

  /** The most {@code /v1} requests this server has had in flight at once (since a reset). */
  public int peakInFlight() {
    return traffic.peakInFlight();
  }

  /** {@code /v1} requests that arrived in each wall-clock second (epoch seconds), oldest first. */
  public Map<Long, Long> requestsPerSecond() {
    return traffic.perSecond();
  }

  /** Whether a request with this key is being processed right now (for key_in_use). */
  public boolean inFlight(String idempotencyKey) {
    return ledger.inFlight(idempotencyKey);
  }

  public void reset() {
    ledger.reset();
    traffic.reset();
  }

  @Override
  public void close() {
    server.stop(0);
    scheduler.shutdownNow();
    requestPool.shutdownNow();
  }

  private void guarded(HttpExchange exchange) {
    try {
      route(exchange);
    } catch (RuntimeException | IOException e) {
      respondQuietly(exchange, 500, ErrorBody.of(HttpProtocol.INTERNAL_ERROR, e.toString()));
    }
  }

  private void route(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getRawPath();
    String method = exchange.getRequestMethod();
    if (path.startsWith("/v1/")) {
      END_OF_REQUEST.put(exchange, traffic.begin());
    }
    if (path.equals(HttpProtocol.PLANS_PATH)) {
      requireMethod(exchange, "GET", () -> throttledThenDelayed(exchange, () -> onPlan(exchange)));
    } else if (path.equals(HttpProtocol.CLEANUPS_PATH)) {
      requireMethod(exchange, "POST", () -> onApply(exchange));
    } else if (path.startsWith(HttpProtocol.CLEANUPS_PATH + "/")) {
      String key =
          URLDecoder.decode(
              path.substring(HttpProtocol.CLEANUPS_PATH.length() + 1), StandardCharsets.UTF_8);
      requireMethod(
          exchange, "GET", () -> throttledThenDelayed(exchange, () -> onLookup(exchange, key)));
    } else if (path.equals("/ledger")) {
      requireMethod(exchange, "GET", () -> onLedger(exchange));
    } else if (path.startsWith("/admin/")
        && !exchange.getRemoteAddress().getAddress().isLoopbackAddress()) {
      // fault knobs and the ledger reset are for the operator on this machine, never the network
      respond(
          exchange,
          403,
          ErrorBody.of("forbidden", "/admin/* answers only on this machine (loopback)"),
          Map.of());
    } else if (path.equals("/admin/faults")) {
      if (method.equals("GET")) {
        respond(exchange, 200, faults, Map.of());
      } else {
        requireMethod(exchange, "PUT", () -> onPutFaults(exchange));
      }
    } else if (path.equals("/admin/stats")) {
      requireMethod(exchange, "GET", () -> onStats(exchange));
    } else if (path.equals("/admin/reset")) {
      requireMethod(
          exchange,
          "POST",
          () -> {
            reset();
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
          });
    } else {
      respond(exchange, 404, ErrorBody.of(HttpProtocol.NOT_FOUND, "no such endpoint"), Map.of());
    }
  }

  private void onPlan(HttpExchange exchange) throws IOException {
    Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
    String accountId = query.get("accountId");
    if (accountId == null || accountId.isBlank()) {
      respond(
          exchange, 400, ErrorBody.of(HttpProtocol.BAD_REQUEST, "accountId is required"), Map.of());
      return;
    }
    respond(
        exchange,
        200,
        planFor(
            accountId, query.getOrDefault("cursor", ""), query.getOrDefault("businessDate", "")),
        Map.of());
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

  private void onLookup(HttpExchange exchange, String key) throws IOException {
    Optional<Receipt> found = ledger.lookup(key);
    if (found.isPresent()) {
      respond(exchange, 200, found.get(), Map.of());
    } else {
      respond(
          exchange,
          404,
          ErrorBody.of(HttpProtocol.NOT_FOUND, "no cleanup was applied under this key"),
          Map.of());
    }
  }

  private void onLedger(HttpExchange exchange) throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("effects", ledger.effects());
    body.put("requests", ledger.requests());
    body.put("peakInFlight", traffic.peakInFlight());
    respond(exchange, 200, body, Map.of());
  }

  /** The traffic as the provider measures it: in flight now, the peak, requests per second. */
  private void onStats(HttpExchange exchange) throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("inFlight", traffic.inFlight());
    body.put("peakInFlight", traffic.peakInFlight());
    Map<String, Long> perSecond = new LinkedHashMap<>();
    traffic.perSecond().forEach((second, count) -> perSecond.put(Long.toString(second), count));
    body.put("requestsPerSecond", perSecond);
    respond(exchange, 200, body, Map.of());
  }

  private void onPutFaults(HttpExchange exchange) throws IOException {
    SimFaults requested;
    try {
      requested = json().readValue(readBody(exchange), SimFaults.class);
    } catch (IOException | IllegalArgumentException e) {
      respond(
          exchange,
          400,
          ErrorBody.of(HttpProtocol.BAD_REQUEST, "invalid faults: " + rootMessage(e)),
          Map.of());
      return;
    }
    setFaults(requested);
    respond(exchange, 200, requested, Map.of());
  }

  private void onApply(HttpExchange exchange) throws IOException {
    ledger.countRequest();
    if (refusedByThrottle(exchange)) {
      return;
    }
    String key = exchange.getRequestHeaders().getFirst(HttpProtocol.IDEMPOTENCY_KEY);
    if (key == null || key.isBlank() || key.length() > 255) {
      respond(
          exchange,
          400,
          ErrorBody.of(
              HttpProtocol.BAD_REQUEST, "Idempotency-Key header is required (1-255 characters)"),
          Map.of());
      return;
    }
    Long token;
    CleanupRequest request;
    try {
      String tokenHeader = exchange.getRequestHeaders().getFirst(HttpProtocol.FENCING_TOKEN);
      token = tokenHeader == null ? null : Long.parseLong(tokenHeader.trim());
      request = json().readValue(readBody(exchange), CleanupRequest.class);
      if (request == null || request.accountId() == null || request.action() == null) {
        throw new IllegalArgumentException("accountId and action are required");
      }
    } catch (IOException | IllegalArgumentException e) {
      respond(
          exchange,
          400,
          ErrorBody.of(HttpProtocol.BAD_REQUEST, "invalid cleanup request: " + rootMessage(e)),
          Map.of());
      return;
    }
    SimFaults current = faults;
    SimLedger.Admission admission = ledger.admit(key, token, request, current);
    // the key stays in flight through the delay, which is what makes a concurrent repeat a 409
    afterDelay(current, exchange, () -> finishApply(exchange, key, request, admission, current));
  }

  private void finishApply(
      HttpExchange exchange,
      String key,
      CleanupRequest request,
      SimLedger.Admission admission,
      SimFaults current)
      throws IOException {
    if (admission instanceof SimLedger.Admission.Refused refused) {
      respond(exchange, refused.status(), refused.body(), Map.of());
      return;
    }
    if (admission instanceof SimLedger.Admission.Replay replay) {
      respond(exchange, 200, replay.first(), Map.of(HttpProtocol.IDEMPOTENT_REPLAYED, "true"));
      return;
    }
    if (chance(current.errorRate())) {
      // a real provider fails both ways: before touching anything, and after committing the
      // effect but before answering; the caller cannot tell which, so it must reconcile
      if (random.nextBoolean()) {
        ledger.abandon(key);
      } else {
        ledger.apply(key, request);
      }
      respond(
          exchange,
          503,
          ErrorBody.of(HttpProtocol.INTERNAL_ERROR, "simulated provider failure"),
          Map.of());
      return;
    }
    Receipt outcome = ledger.apply(key, request);
    if (chance(current.timeoutAfterAccept())) {
      // accepted and applied, but the caller never hears about it
      if (current.holdAfterAcceptMs() == 0) {
        hangUp(exchange);
      } else {
        scheduler.schedule(
            () -> hangUp(exchange), current.holdAfterAcceptMs(), TimeUnit.MILLISECONDS);
      }
      return;
    }
    respond(exchange, 201, outcome, Map.of());
  }

  /** The GET endpoints: throttle, delay, then a 5xx at the error rate (nothing is applied). */
  private void throttledThenDelayed(HttpExchange exchange, ExchangeAction action)
      throws IOException {
    if (refusedByThrottle(exchange)) {
      return;
    }
    SimFaults current = faults;
    afterDelay(
        current,
        exchange,
        () -> {
          if (chance(current.errorRate())) {
            respond(
                exchange,
                503,
                ErrorBody.of(HttpProtocol.INTERNAL_ERROR, "simulated provider failure"),
                Map.of());
          } else {
            action.run();
          }
        });
  }

  private boolean refusedByThrottle(HttpExchange exchange) throws IOException {
    TokenBucket bucket = throttle;
    if (bucket == null) {
      return false;
    }
    long waitNanos = bucket.tryAcquire();
    if (waitNanos == 0) {
      return false;
    }
    long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos));
    long waitSeconds = Math.max(1, (waitMillis + 999) / 1000);
    respond(
        exchange,
        429,
        ErrorBody.of(
            HttpProtocol.THROTTLED,
            "rate limit of " + bucket.ratePerSecond() + " requests per second exceeded"),
        Map.of(
            HttpProtocol.RETRY_AFTER,
            Long.toString(waitSeconds),
            HttpProtocol.RETRY_AFTER_MS,
            Long.toString(waitMillis)));
    return true;
  }

  private void afterDelay(SimFaults current, HttpExchange exchange, ExchangeAction action)
      throws IOException {
    long delay =
        current.latencyMs()
            + (current.jitterMs() > 0 ? random.nextLong(current.jitterMs() + 1) : 0);
    if (delay == 0) {
      action.run();
      return;
    }
    Runnable resume = () -> runGuarded(exchange, action);
    scheduler.schedule(() -> requestPool.execute(resume), delay, TimeUnit.MILLISECONDS);
  }

  private void runGuarded(HttpExchange exchange, ExchangeAction action) {
    try {
      action.run();
    } catch (RuntimeException | IOException e) {
      respondQuietly(exchange, 500, ErrorBody.of(HttpProtocol.INTERNAL_ERROR, e.toString()));
    }
  }

  private boolean chance(double probability) {
    return probability > 0 && random.nextDouble() < probability;
  }

  private void requireMethod(HttpExchange exchange, String method, ExchangeAction action)
      throws IOException {
    if (exchange.getRequestMethod().equals(method)) {
      action.run();
    } else {
      respond(
          exchange,
          405,
          ErrorBody.of("method_not_allowed", "use " + method + " on this path"),
          Map.of("Allow", method));
    }
  }

  private static byte[] readBody(HttpExchange exchange) throws IOException {
    byte[] body = exchange.getRequestBody().readNBytes(MAX_BODY_BYTES + 1);
    if (body.length > MAX_BODY_BYTES) {
      throw new IOException("request body exceeds " + MAX_BODY_BYTES + " bytes");
    }
    return body;
  }

  private static void respond(
      HttpExchange exchange, int status, Object body, Map<String, String> headers)
      throws IOException {
    byte[] bytes;
    try {
      bytes = json().writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new IOException("cannot encode response", e);
    }
    exchange.getResponseHeaders().set("Content-Type", JSON_TYPE);
    headers.forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
    // the answer is decided: the request is done here before the caller can see the answer (and
    // start its next call), so what is counted in flight lies within the caller's own call
    endOfRequest(exchange);
    try {
      exchange.sendResponseHeaders(status, bytes.length);
      try (var out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    } finally {
      exchange.close();
    }
  }

  /** Closes the exchange without an answer; a {@code /v1} request is no longer in flight. */
  private static void hangUp(HttpExchange exchange) {
    endOfRequest(exchange);
    exchange.close();
  }

  private static void endOfRequest(HttpExchange exchange) {
    Runnable end = END_OF_REQUEST.remove(exchange);
    if (end != null) {
      end.run();
    }
  }

  private static void respondQuietly(HttpExchange exchange, int status, ErrorBody body) {
    try {
      respond(exchange, status, body, Map.of());
    } catch (IOException | RuntimeException e) {
      // headers were already sent or the client is gone: all that is left is to hang up
      hangUp(exchange);
    }
  }

  private static Map<String, String> query(String rawQuery) {
    Map<String, String> values = new HashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return values;
    }
    for (String pair : rawQuery.split("&")) {
      int eq = pair.indexOf('=');
      String name = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      values.put(
          URLDecoder.decode(name, StandardCharsets.UTF_8),
          URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return values;
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return root.getMessage() == null ? root.toString() : root.getMessage();
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger counter = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + "-" + counter.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  @FunctionalInterface
  private interface ExchangeAction {
    void run() throws IOException;
  }
}

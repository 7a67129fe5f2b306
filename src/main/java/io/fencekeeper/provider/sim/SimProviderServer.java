package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.http.HttpProtocol.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.typesafe.config.ConfigFactory;
import io.fencekeeper.DaemonThreads;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.CleanupRequest;
import io.fencekeeper.provider.http.HttpProtocol.ErrorBody;
import io.fencekeeper.provider.http.StandaloneSystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.RemoteAddress;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.SystemMaterializer;
import org.apache.pekko.stream.TLSProtocol.SslTlsInbound;
import org.apache.pekko.stream.TLSProtocol.SslTlsOutbound;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.TLSPlacebo;
import org.apache.pekko.stream.javadsl.Tcp;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.util.ByteString;
import scala.concurrent.ExecutionContextExecutor;

/**
 * The simulated payment provider: the provider protocol (docs/provider-protocol.md) served by a
 * real HTTP server (Pekko HTTP), with a ledger that counts effects per key and the fault knobs of
 * {@link SimFaults}. Runs in-process (the embedded default on the node's actor system, tests on a
 * small system of their own) or as its own process ({@link SimProviderCommand}).
 *
 * <p>Nothing blocks: a delayed request waits on one timer thread of the sim's own and is answered
 * on the actor system's dispatcher, so a slow provider with many callers stays cheap to simulate.
 * (Not on Pekko's scheduler: with its 10 ms ticks a call at a latency of 5 ms took about 30 ms and
 * one at 20 ms about 40 ms; on the JDK's scheduled executor they take 7.7 and 23.1 ms, HTTP
 * included: docs/bench.md, "Where a node's CPU goes".) Each connection carries one request at a
 * time; a cleanup that is "accepted and never answered" ends its connection without an answer (at
 * once, or after holding it silently for {@code holdAfterAcceptMs}).
 */
public final class SimProviderServer implements AutoCloseable {

  private static final int MAX_BODY_BYTES = 64 * 1024;
  private static final Duration BODY_WAIT = Duration.ofSeconds(10);
  private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(60);

  /** Plain TCP under the HTTP layer (what Pekko's own server uses without TLS). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static final BidiFlow<SslTlsOutbound, ByteString, ByteString, SslTlsInbound, NotUsed>
      PLAIN_TCP = (BidiFlow) TLSPlacebo.getInstance();

  /** Not an answer: the request's connection is dropped without one ({@link HangUp}). */
  private static final HttpResponse HANG_UP = HttpResponse.create().withStatus(599);

  private final ActorSystem system;
  private final ActorSystem ownedSystem;
  private final ExecutionContextExecutor executor;
  private final ScheduledExecutorService delays;
  private final Materializer materializer;
  private final RandomGenerator random;
  private final SimLedger ledger = new SimLedger();
  private final SimTraffic traffic = new SimTraffic(System::currentTimeMillis);
  private final ServerSettings serverSettings;
  private final LoggingAdapter log;
  private final Set<SharedKillSwitch> connections = ConcurrentHashMap.newKeySet();
  private volatile SimFaults faults;
  private volatile TokenBucket throttle;
  private volatile Tcp.ServerBinding binding;

  private SimProviderServer(
      ActorSystem system, ActorSystem ownedSystem, SimFaults faults, long seed) {
    this.system = system;
    this.ownedSystem = ownedSystem;
    this.executor = system.dispatcher();
    this.delays =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("sim-provider-latency"));
    this.materializer = SystemMaterializer.get(system).materializer();
    this.log = Logging.getLogger(system, SimProviderServer.class);
    // the sim holds requests on purpose (latency, accepted and never answered): no request
    // timeout of the server's own; the peer's address decides who may use /admin
    this.serverSettings =
        ServerSettings.create(
            ConfigFactory.parseMap(
                    Map.of(
                        "pekko.http.server.request-timeout", "infinite",
                        "pekko.http.server.remote-address-attribute", "on"))
                .withFallback(system.settings().config()));
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

  /**
   * On an actor system of its own, which closing the server terminates; its dispatcher has about
   * one thread per core and at most {@code threads}.
   */
  public static SimProviderServer start(
      String host, int port, SimFaults faults, long seed, int threads) {
    ActorSystem own = StandaloneSystem.start("fencekeeper-sim-provider", threads);
    try {
      return bind(new SimProviderServer(own, own, faults, seed), host, port);
    } catch (RuntimeException e) {
      StandaloneSystem.terminate(own);
      throw e;
    }
  }

  /** On {@code system} (a node's embedded provider), which outlives the server. */
  public static SimProviderServer start(
      ClassicActorSystemProvider system, String host, int port, SimFaults faults, long seed) {
    return bind(new SimProviderServer(system.classicSystem(), null, faults, seed), host, port);
  }

  private static SimProviderServer bind(SimProviderServer sim, String host, int port) {
    try {
      sim.binding =
          Tcp.get(sim.system)
              .bind(host, port, 128, List.of(), false, Optional.of(IDLE_TIMEOUT))
              .to(Sink.foreach(sim::serveGuarded))
              .run(sim.materializer)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      return sim;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the sim provider was binding", e);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new UncheckedIOException(
          "sim provider cannot listen on " + host + ":" + port,
          new IOException(String.valueOf(cause.getMessage()), cause));
    }
  }

  /** A connection that cannot be served must not stop the server from accepting the next. */
  private void serveGuarded(Tcp.IncomingConnection connection) {
    try {
      serve(connection);
    } catch (RuntimeException e) {
      log.error(
          e, "the sim provider cannot serve a connection from {}", connection.remoteAddress());
    }
  }

  /**
   * One connection: Pekko HTTP's server layer over the TCP connection, one request at a time. A
   * {@link #HANG_UP} closes the TCP connection itself (the kill switch on its outgoing bytes), so
   * nothing at all is written for the request, as when a provider crashes after committing.
   */
  private void serve(Tcp.IncomingConnection connection) {
    SharedKillSwitch hangUp = KillSwitches.shared("sim-provider-connection");
    connections.add(hangUp);
    Flow<HttpRequest, HttpResponse, NotUsed> handler =
        Flow.of(HttpRequest.class).mapAsync(1, this::handle).via(new HangUp(hangUp));
    Flow<ByteString, ByteString, CompletionStage<Done>> http =
        Http.get(system)
            .serverLayer(serverSettings, Optional.of(connection.remoteAddress()), log)
            .atop(PLAIN_TCP)
            .reversed()
            .join(handler)
            .via(hangUp.<ByteString>flow())
            .watchTermination((notUsed, done) -> done);
    connection
        .handleWith(http, materializer)
        .whenComplete((done, failure) -> connections.remove(hangUp));
  }

  public int port() {
    return binding.localAddress().getPort();
  }

  public URI baseUrl() {
    InetSocketAddress bound = binding.localAddress();
    return URI.create(
        "http://" + bound.getAddress().getHostAddress() + ":" + bound.getPort() + "/");
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

  /** Loses the effect under this key ({@code DELETE /admin/effects/{key}}); false if none. */
  public boolean loseEffect(String idempotencyKey) {
    return ledger.lose(idempotencyKey);
  }

  /** Writes an effect Fencekeeper never asked for ({@code POST /admin/effects/{key}}). */
  public Receipt writeForeignEffect(String idempotencyKey) {
    return ledger.writeForeign(idempotencyKey);
  }

  /** Lookups answered per key since the start or the last reset ({@code GET /admin/lookups}). */
  public Map<String, Long> lookups() {
    return ledger.lookups();
  }

  /**
   * Stops listening, closes every connection (a request in flight gets no answer), and terminates
   * the server's own actor system if it has one.
   */
  @Override
  public void close() {
    Tcp.ServerBinding bound = binding;
    try {
      if (bound != null) {
        bound.unbind().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      // the listening socket closes with the actor system at the latest
    } finally {
      connections.forEach(SharedKillSwitch::shutdown);
      delays.shutdownNow();
      if (ownedSystem != null) {
        StandaloneSystem.terminate(ownedSystem);
      }
    }
  }

  /** Connections open right now (a test's view). */
  int openConnections() {
    return connections.size();
  }

  /**
   * One request: what it answers, or {@link #HANG_UP}. A {@code /v1} request is in flight from here
   * until its answer (or hang-up) is decided, before a byte of it is written: a caller never has
   * its answer while the sim still counts its request, so one that starts its next call at once is
   * not counted twice.
   */
  private CompletionStage<HttpResponse> handle(HttpRequest request) {
    String path = request.getUri().path();
    Runnable end = path.startsWith("/v1/") ? traffic.begin() : null;
    CompletionStage<HttpResponse> answer;
    try {
      answer = route(request, path);
    } catch (RuntimeException e) {
      answer = done(internalError(e));
    }
    CompletableFuture<HttpResponse> settled = new CompletableFuture<>();
    answer.whenComplete(
        (response, failure) -> {
          if (end != null) {
            end.run();
          }
          settled.complete(failure != null ? internalError(failure) : response);
        });
    return settled;
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
        return done(respond(200, faults));
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
    Map<String, String> query = query(request.getUri().rawQueryString().orElse(null));
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
    return body(request)
        .handle(
            (bytes, failure) -> {
              SimFaults requested;
              try {
                if (failure != null) {
                  throw asIo(failure);
                }
                requested = json().readValue(bytes, SimFaults.class);
              } catch (IOException | IllegalArgumentException e) {
                return respond(
                    400,
                    ErrorBody.of(HttpProtocol.BAD_REQUEST, "invalid faults: " + rootMessage(e)));
              }
              setFaults(requested);
              return respond(200, requested);
            });
  }

  private CompletionStage<HttpResponse> onApply(HttpRequest request) {
    ledger.countRequest();
    HttpResponse refused = refusedByThrottle();
    if (refused != null) {
      return done(refused);
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
    return body(request)
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
      if (bodyFailure != null) {
        throw asIo(bodyFailure);
      }
      cleanup = json().readValue(bytes, CleanupRequest.class);
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
    SimFaults current = faults;
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
    if (chance(current.errorRate())) {
      // a real provider fails both ways: before touching anything, and after committing the
      // effect but before answering; the caller cannot tell which, so it must reconcile
      if (random.nextBoolean()) {
        ledger.abandon(key);
      } else {
        ledger.apply(key, request);
      }
      return done(
          respond(503, ErrorBody.of(HttpProtocol.INTERNAL_ERROR, "simulated provider failure")));
    }
    Receipt outcome = ledger.apply(key, request);
    if (chance(current.timeoutAfterAccept())) {
      // accepted and applied, but the caller never hears about it
      return current.holdAfterAcceptMs() == 0
          ? done(HANG_UP)
          : later(current.holdAfterAcceptMs(), () -> done(HANG_UP));
    }
    return done(respond(201, outcome));
  }

  /** The GET endpoints: throttle, delay, then a 5xx at the error rate (nothing is applied). */
  private CompletionStage<HttpResponse> throttledThenDelayed(Supplier<HttpResponse> action) {
    HttpResponse refused = refusedByThrottle();
    if (refused != null) {
      return done(refused);
    }
    SimFaults current = faults;
    return afterDelay(
        current,
        () ->
            done(
                chance(current.errorRate())
                    ? respond(
                        503,
                        ErrorBody.of(HttpProtocol.INTERNAL_ERROR, "simulated provider failure"))
                    : action.get()));
  }

  /** The 429 of the token bucket, or null when a token was free. */
  private HttpResponse refusedByThrottle() {
    TokenBucket bucket = throttle;
    if (bucket == null) {
      return null;
    }
    long waitNanos = bucket.tryAcquire();
    if (waitNanos == 0) {
      return null;
    }
    long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos));
    long waitSeconds = Math.max(1, (waitMillis + 999) / 1000);
    return respond(
        429,
        ErrorBody.of(
            HttpProtocol.THROTTLED,
            "rate limit of " + bucket.ratePerSecond() + " requests per second exceeded"),
        RawHeader.create(HttpProtocol.RETRY_AFTER, Long.toString(waitSeconds)),
        RawHeader.create(HttpProtocol.RETRY_AFTER_MS, Long.toString(waitMillis)));
  }

  private CompletionStage<HttpResponse> afterDelay(
      SimFaults current, Supplier<CompletionStage<HttpResponse>> action) {
    long delay =
        current.latencyMs()
            + (current.jitterMs() > 0 ? random.nextLong(current.jitterMs() + 1) : 0);
    return delay == 0 ? action.get() : later(delay, action);
  }

  /** {@code action} after {@code millis}, on the dispatcher; nothing waits meanwhile. */
  private CompletionStage<HttpResponse> later(
      long millis, Supplier<CompletionStage<HttpResponse>> action) {
    CompletableFuture<HttpResponse> answer = new CompletableFuture<>();
    Runnable respond =
        () -> {
          try {
            action
                .get()
                .whenComplete(
                    (response, failure) ->
                        answer.complete(failure != null ? internalError(failure) : response));
          } catch (RuntimeException e) {
            answer.complete(internalError(e));
          }
        };
    try {
      // the timer thread only hands over: the answer is built on the dispatcher
      delays.schedule(() -> executor.execute(respond), millis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closed) {
      // the server is closing: the request gets no answer, like every other in flight
    }
    return answer;
  }

  private boolean chance(double probability) {
    return probability > 0 && random.nextDouble() < probability;
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
   * The request's body, at most {@link #MAX_BODY_BYTES}: at once when it came with the headers,
   * otherwise read within {@link #BODY_WAIT} and continued on the dispatcher.
   */
  private CompletionStage<byte[]> body(HttpRequest request) {
    HttpEntity entity = request.entity();
    // announced as too large: refused unread, whether or not the bytes came with the headers
    // (toStrict would fail a body still arriving with a generic entity error, not the size limit)
    if (entity.getContentLengthOption().orElse(0) > MAX_BODY_BYTES) {
      entity.getDataBytes().runWith(Sink.cancelled(), materializer);
      return CompletableFuture.failedFuture(tooLarge());
    }
    if (entity.isStrict()) {
      return CompletableFuture.completedFuture(((HttpEntity.Strict) entity).getData().toArray());
    }
    CompletableFuture<byte[]> bytes = new CompletableFuture<>();
    entity
        .toStrict(BODY_WAIT.toMillis(), MAX_BODY_BYTES, materializer)
        .whenCompleteAsync(
            (strict, failure) -> {
              if (failure == null) {
                bytes.complete(strict.getData().toArray());
              } else if (isSizeLimit(failure)) {
                bytes.completeExceptionally(tooLarge());
              } else {
                bytes.completeExceptionally(
                    new IOException("request body could not be read: " + failure.getMessage()));
              }
            },
            executor);
    return bytes;
  }

  private static boolean isSizeLimit(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof org.apache.pekko.http.scaladsl.model.EntityStreamSizeException) {
        return true;
      }
    }
    return false;
  }

  private static IOException tooLarge() {
    return new IOException("request body exceeds " + MAX_BODY_BYTES + " bytes");
  }

  private static IOException asIo(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause instanceof IOException io ? io : new IOException(cause.toString(), cause);
  }

  private static String header(HttpRequest request, String name) {
    return request.getHeader(name).map(HttpHeader::value).orElse(null);
  }

  private static CompletionStage<HttpResponse> done(HttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }

  private static HttpResponse internalError(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return respond(500, ErrorBody.of(HttpProtocol.INTERNAL_ERROR, cause.toString()));
  }

  static HttpResponse respond(int status, Object body, HttpHeader... headers) {
    byte[] bytes;
    try {
      bytes = json().writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      status = 500;
      bytes =
          ("{\"error\":\""
                  + HttpProtocol.INTERNAL_ERROR
                  + "\",\"message\":\"cannot encode response\"}")
              .getBytes(StandardCharsets.UTF_8);
    }
    HttpResponse response =
        HttpResponse.create()
            .withStatus(status)
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, bytes));
    return headers.length == 0 ? response : response.addHeaders(Arrays.asList(headers));
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

  /**
   * The end of each connection's handler: passes answers on, and at {@link #HANG_UP} closes the
   * connection through its kill switch instead. It then neither asks for more nor completes, so the
   * HTTP layer never renders anything for the request (completing or failing the handler would make
   * it answer 500); the connection's stream ends when the closed TCP connection tears it down.
   */
  private static final class HangUp extends GraphStage<FlowShape<HttpResponse, HttpResponse>> {
    private final Inlet<HttpResponse> in = Inlet.create("SimHangUp.in");
    private final Outlet<HttpResponse> out = Outlet.create("SimHangUp.out");
    private final FlowShape<HttpResponse, HttpResponse> shape = FlowShape.of(in, out);
    private final SharedKillSwitch connection;

    HangUp(SharedKillSwitch connection) {
      this.connection = connection;
    }

    @Override
    public FlowShape<HttpResponse, HttpResponse> shape() {
      return shape;
    }

    @Override
    public GraphStageLogic createLogic(Attributes attributes) {
      return new GraphStageLogic(shape) {
        private boolean hungUp;

        {
          setHandler(
              in,
              new AbstractInHandler() {
                @Override
                public void onPush() {
                  HttpResponse response = grab(in);
                  if (response == HANG_UP) {
                    hungUp = true;
                    connection.shutdown();
                  } else {
                    push(out, response);
                  }
                }

                @Override
                public void onUpstreamFinish() {
                  if (!hungUp) {
                    completeStage();
                  }
                }
              });
          setHandler(
              out,
              new AbstractOutHandler() {
                @Override
                public void onPull() {
                  if (!hungUp) {
                    pull(in);
                  }
                }
              });
        }
      };
    }
  }
}

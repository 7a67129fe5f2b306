package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.http.HttpProtocol.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.typesafe.config.ConfigFactory;
import io.fencekeeper.DaemonThreads;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.ErrorBody;
import io.fencekeeper.provider.http.StandaloneSystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
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
 * The sim's HTTP transport (Pekko HTTP): the listening socket, its connections, request bodies, the
 * timer that delays answers, and the helpers that build answers. What a request answers is {@link
 * SimRoutes}'s business.
 *
 * <p>Nothing blocks: a delayed request waits on one timer thread of the sim's own and is answered
 * on the actor system's dispatcher, so a slow provider with many callers stays cheap to simulate.
 * (Not on Pekko's scheduler: with its 10 ms ticks a call at a latency of 5 ms took about 30 ms and
 * one at 20 ms about 40 ms; on the JDK's scheduled executor they take 7.7 and 23.1 ms, HTTP
 * included: docs/bench.md, "Where a node's CPU goes".) Each connection carries one request at a
 * time; an answer of {@link #HANG_UP} ends its connection without an answer.
 */
final class SimTransport implements AutoCloseable {

  private static final int MAX_BODY_BYTES = 64 * 1024;
  private static final Duration BODY_WAIT = Duration.ofSeconds(10);
  private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(60);

  /** Plain TCP under the HTTP layer (what Pekko's own server uses without TLS). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static final BidiFlow<SslTlsOutbound, ByteString, ByteString, SslTlsInbound, NotUsed>
      PLAIN_TCP = (BidiFlow) TLSPlacebo.getInstance();

  /** Not an answer: the request's connection is dropped without one ({@link HangUp}). */
  static final HttpResponse HANG_UP = HttpResponse.create().withStatus(599);

  private final ActorSystem system;
  private final ActorSystem ownedSystem;
  private final ExecutionContextExecutor executor;
  private final ScheduledExecutorService delays;
  private final Materializer materializer;
  private final ServerSettings serverSettings;
  private final LoggingAdapter log;
  private final Set<SharedKillSwitch> connections = ConcurrentHashMap.newKeySet();
  // the Server header by which this sim's HTTP-layer errors find whether it answers as 1.1
  private final String serverName;
  private volatile Supplier<Boolean> answers11 = () -> true;
  private volatile Function<HttpRequest, CompletionStage<HttpResponse>> handler;
  private volatile Tcp.ServerBinding binding;

  /** On {@code system}; {@code ownedSystem} (the same system, or null) is terminated on close. */
  SimTransport(ActorSystem system, ActorSystem ownedSystem) {
    this.system = system;
    this.ownedSystem = ownedSystem;
    this.executor = system.dispatcher();
    this.delays =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("sim-provider-latency"));
    this.materializer = SystemMaterializer.get(system).materializer();
    this.log = Logging.getLogger(system, SimProviderServer.class);
    this.serverName = SimParsingErrors.register(() -> answers11.get());
    // the sim holds requests on purpose (latency, accepted and never answered): no request
    // timeout of the server's own; the peer's address decides who may use /admin; a request its
    // HTTP layer cannot parse is answered in the protocol's terms (SimParsingErrors); a request
    // target of 8 KiB, what a server must accept (the longest plan request is about 2.5 KiB)
    this.serverSettings =
        ServerSettings.create(
            ConfigFactory.parseMap(
                    Map.of(
                        "pekko.http.server.request-timeout", "infinite",
                        "pekko.http.server.remote-address-attribute", "on",
                        "pekko.http.server.server-header", serverName,
                        "pekko.http.server.parsing.error-handler", SimParsingErrors.class.getName(),
                        "pekko.http.server.parsing.max-uri-length", "8k"))
                .withFallback(system.settings().config()));
  }

  /** Listens on {@code host:port} (0 picks a free port); {@code handler} answers each request. */
  void bind(String host, int port, Function<HttpRequest, CompletionStage<HttpResponse>> handler) {
    this.handler = handler;
    try {
      binding =
          Tcp.get(system)
              .bind(host, port, 128, List.of(), false, Optional.of(IDLE_TIMEOUT))
              .to(Sink.foreach(this::serveGuarded))
              .run(materializer)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the sim provider was binding", e);
    } catch (ExecutionException | TimeoutException e) {
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
    Flow<HttpRequest, HttpResponse, NotUsed> answers =
        Flow.of(HttpRequest.class).mapAsync(1, handler::apply).via(new HangUp(hangUp));
    Flow<ByteString, ByteString, CompletionStage<Done>> http =
        Http.get(system)
            .serverLayer(serverSettings, Optional.of(connection.remoteAddress()), log)
            .atop(PLAIN_TCP)
            .reversed()
            .join(answers)
            .via(hangUp.<ByteString>flow())
            .watchTermination((notUsed, done) -> done);
    connection
        .handleWith(http, materializer)
        .whenComplete((done, failure) -> connections.remove(hangUp));
  }

  /** Whether the sim answers as 1.1 now: its HTTP-layer errors then carry the version too. */
  void answersAs11(Supplier<Boolean> answers11) {
    this.answers11 = answers11;
  }

  InetSocketAddress address() {
    return binding.localAddress();
  }

  /** Connections open right now (a test's view). */
  int openConnections() {
    return connections.size();
  }

  /**
   * Stops listening, closes every connection (a request in flight gets no answer), and terminates
   * the owned actor system if there is one.
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
    } catch (ExecutionException | TimeoutException e) {
      // the listening socket closes with the actor system at the latest
    } finally {
      connections.forEach(SharedKillSwitch::shutdown);
      delays.shutdownNow();
      SimParsingErrors.unregister(serverName);
      if (ownedSystem != null) {
        StandaloneSystem.terminate(ownedSystem);
      }
    }
  }

  /** {@code action} after {@code millis}, on the dispatcher; nothing waits meanwhile. */
  CompletionStage<HttpResponse> later(long millis, Supplier<CompletionStage<HttpResponse>> action) {
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

  /** A body over {@link #MAX_BODY_BYTES}: 413 {@code payload_too_large}. */
  static final class BodyTooLarge extends IOException {
    BodyTooLarge() {
      super("request body exceeds " + MAX_BODY_BYTES + " bytes");
    }
  }

  /** A body that did not arrive within {@link #BODY_WAIT}: 408 {@code request_timeout}. */
  static final class BodyTooSlow extends IOException {
    BodyTooSlow() {
      super("request body did not arrive within " + BODY_WAIT.toSeconds() + " s");
    }
  }

  /**
   * The request's body, at most {@link #MAX_BODY_BYTES}: at once when it came with the headers,
   * otherwise read within {@link #BODY_WAIT} and continued on the dispatcher. It fails with an
   * {@link IOException} when it cannot be had ({@link BodyTooLarge}, {@link BodyTooSlow}, or cut
   * off).
   */
  CompletionStage<byte[]> body(HttpRequest request) {
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
              } else if (causedBy(failure, TimeoutException.class)) {
                bytes.completeExceptionally(new BodyTooSlow());
              } else {
                bytes.completeExceptionally(
                    new IOException("request body could not be read: " + failure.getMessage()));
              }
            },
            executor);
    return bytes;
  }

  /**
   * The limit, as toStrict reports it for a body announced too large ({@link
   * EntityStreamSizeException}) or one that grows past it while it streams in (the server layer's
   * "Request too large", an entity stream error of another type).
   */
  private static boolean isSizeLimit(Throwable failure) {
    if (causedBy(failure, EntityStreamSizeException.class)) {
      return true;
    }
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t.getMessage() != null && t.getMessage().startsWith("Request too large")) {
        return true;
      }
    }
    return false;
  }

  private static boolean causedBy(Throwable failure, Class<? extends Throwable> type) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  private static IOException tooLarge() {
    return new BodyTooLarge();
  }

  static CompletionStage<HttpResponse> done(HttpResponse response) {
    return CompletableFuture.completedFuture(response);
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

  static HttpResponse internalError(Throwable failure) {
    return respond(500, ErrorBody.of(HttpProtocol.INTERNAL_ERROR, unwrap(failure).toString()));
  }

  /** What failed, without the wrapper a failed stage puts around it. */
  static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return root.getMessage() == null ? root.toString() : root.getMessage();
  }

  static String header(HttpRequest request, String name) {
    return request.getHeader(name).map(HttpHeader::value).orElse(null);
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

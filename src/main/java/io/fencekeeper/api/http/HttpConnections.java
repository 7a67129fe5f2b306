package io.fencekeeper.api.http;

import io.fencekeeper.api.metrics.ApiMetrics;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.IncomingConnection;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API's server socket and the connections it takes (docs/security.md, "In front of an exposed
 * node"): at most {@code pekko.http.server.max-connections} at once (1,024; more wait to be
 * accepted), at most {@code fencekeeper.http.max-connections-per-address} from one remote address
 * (32; more are closed as soon as they are accepted, so one machine cannot take the server's
 * connections from everyone else), and each request head within {@code
 * fencekeeper.http.request-head-timeout} ({@link RequestHeadDeadline}). Pekko HTTP has neither of
 * the last two, so the server is bound as a source of connections and each one is handled here.
 */
public final class HttpConnections {

  private static final Logger log = LoggerFactory.getLogger(HttpConnections.class);

  /**
   * @param perAddress 0: no cap per remote address (behind a reverse proxy, every connection is the
   *     proxy's)
   */
  public record Limits(int maxConnections, int perAddress, Duration headTimeout) {
    public Limits {
      if (maxConnections < 1 || perAddress < 0) {
        throw new IllegalArgumentException(
            "pekko.http.server.max-connections must be at least 1 and"
                + " fencekeeper.http.max-connections-per-address at least 0");
      }
    }

    public static Limits of(ActorSystem<?> system) {
      var config = system.settings().config();
      return new Limits(
          config.getInt("pekko.http.server.max-connections"),
          config.hasPath("fencekeeper.http.max-connections-per-address")
              ? config.getInt("fencekeeper.http.max-connections-per-address")
              : 0,
          config.hasPath("fencekeeper.http.request-head-timeout")
              ? config.getDuration("fencekeeper.http.request-head-timeout")
              : Duration.ofSeconds(10));
    }
  }

  private final ActorSystem<?> system;
  private final Limits limits;
  private final ApiMetrics metrics;
  private final Map<String, Integer> byAddress = new ConcurrentHashMap<>();

  public HttpConnections(ActorSystem<?> system, Limits limits, ApiMetrics metrics) {
    this.system = system;
    this.limits = limits;
    this.metrics = metrics;
    metrics.httpConnections(() -> byAddress.values().stream().mapToInt(Integer::intValue).sum());
  }

  /** Binds {@code host:port} and serves {@code route} on every connection it takes. */
  public CompletionStage<ServerBinding> bind(String host, int port, Route route) {
    Flow<HttpRequest, HttpResponse, NotUsed> handler =
        BidiFlow.fromGraph(new RequestHeadDeadline(limits.headTimeout())).join(route.flow(system));
    Materializer materializer = Materializer.matFromSystem(system);
    Source<IncomingConnection, CompletionStage<ServerBinding>> connections =
        Http.get(system).newServerAt(host, port).connectionSource();
    return connections
        .mapAsyncUnordered(limits.maxConnections(), c -> serve(c, handler, materializer))
        .toMat(Sink.ignore(), Keep.left())
        .run(materializer);
  }

  /** Serves one connection, or closes it at once; completes when the connection has ended. */
  private CompletionStage<Done> serve(
      IncomingConnection connection,
      Flow<HttpRequest, HttpResponse, NotUsed> handler,
      Materializer materializer) {
    String address = address(connection.remoteAddress());
    int held = byAddress.merge(address, 1, Integer::sum);
    if (limits.perAddress() > 0 && held > limits.perAddress()) {
      release(address);
      metrics.connectionRefused();
      log.debug("closed a connection from {}: it holds {} already", address, held - 1);
      connection.handleWith(
          Flow.fromSinkAndSourceCoupled(Sink.cancelled(), Source.<HttpResponse>empty()),
          materializer);
      return CompletableFuture.completedFuture(Done.getInstance());
    }
    try {
      return connection
          .handleWith(handler.watchTermination(Keep.right()), materializer)
          .handle(
              (done, failure) -> {
                release(address);
                return Done.getInstance();
              });
    } catch (RuntimeException e) {
      // one connection that fails to start must not stop the server from taking others
      release(address);
      log.warn("could not serve a connection from {}: {}", address, e.toString());
      return CompletableFuture.completedFuture(Done.getInstance());
    }
  }

  private void release(String address) {
    byAddress.computeIfPresent(address, (k, n) -> n == 1 ? null : n - 1);
  }

  private static String address(InetSocketAddress remote) {
    return remote.getAddress() != null ? remote.getAddress().getHostAddress() : remote.toString();
  }
}

package io.fencekeeper.api;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.extractStrictEntity;
import static org.apache.pekko.http.javadsl.server.Directives.handleExceptions;
import static org.apache.pekko.http.javadsl.server.Directives.handleRejections;
import static org.apache.pekko.http.javadsl.server.Directives.withSizeLimit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.web.WebAssets;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunService;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.ExceptionHandler;
import org.apache.pekko.http.javadsl.server.Rejection;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's HTTP API (design §4.1) on pekko-http: every route of {@link ApiEndpoint}, JSON in and
 * out, the bearer token on mutating endpoints, and one error envelope for every refusal. Nothing a
 * client sends reaches Pekko's default error pages, and no refusal is a 500.
 */
public final class HttpApi {

  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  /** A handler of one endpoint; it may refuse by throwing {@link ApiError}. */
  interface Handler extends Function<ApiCall, CompletionStage<ApiResponse>> {}

  private final ApiSettings settings;
  private final ObjectMapper mapper = ApiJson.mapper();
  private final ApiMetrics metrics;
  private final Map<ApiEndpoint, Handler> handlers = new EnumMap<>(ApiEndpoint.class);
  private final byte[] expectedAuthorization;
  private final RunEventStreams events;

  HttpApi(
      ActorSystem<?> system,
      ApiSettings settings,
      RunService runs,
      ItemGateway items,
      ItemAudit audit,
      RunScopes scopes,
      RunItemStore queries,
      ExecutorService blocking,
      ApiMetrics metrics,
      AtomicReference<GovernorSettings> governor) {
    this.settings = settings;
    this.metrics = metrics;
    this.expectedAuthorization = ("Bearer " + settings.apiToken()).getBytes(StandardCharsets.UTF_8);
    ItemGateway metered = new MeteredItemGateway(items, metrics, "api");
    ItemPages pages = new ItemPages(queries, metered, blocking);
    RunEndpoints run =
        new RunEndpoints(mapper, runs, scopes, pages, governor::get, metrics, settings.maxLease());
    ItemEndpoints item =
        new ItemEndpoints(
            mapper, runs, metered, audit, scopes, queries, blocking, settings.maxLease());
    OpsEndpoints ops = new OpsEndpoints(mapper, runs, metrics, governor);
    handlers.put(ApiEndpoint.CREATE_RUN, run::create);
    handlers.put(ApiEndpoint.LIST_RUNS, run::list);
    handlers.put(ApiEndpoint.GET_RUN, run::get);
    handlers.put(ApiEndpoint.RESUME_RUN, run::resume);
    handlers.put(ApiEndpoint.CANCEL_RUN, run::cancel);
    handlers.put(ApiEndpoint.LIST_RUN_ITEMS, run::items);
    handlers.put(ApiEndpoint.CLAIM_NEXT, run::claimNext);
    handlers.put(ApiEndpoint.GET_ITEM, item::get);
    handlers.put(ApiEndpoint.ITEM_AUDIT, item::audit);
    handlers.put(ApiEndpoint.RETRY_ITEM, item::retry);
    handlers.put(ApiEndpoint.CLAIM_ITEM, item::claim);
    handlers.put(ApiEndpoint.RENEW_ITEM, item::renew);
    handlers.put(ApiEndpoint.RECORD_EFFECT, item::effect);
    handlers.put(ApiEndpoint.MARK_AMBIGUOUS, item::ambiguous);
    handlers.put(ApiEndpoint.COMPLETE_ITEM, item::complete);
    handlers.put(ApiEndpoint.FAIL_ITEM, item::fail);
    handlers.put(ApiEndpoint.RELEASE_ITEM, item::release);
    handlers.put(ApiEndpoint.GET_GOVERNOR, ops::getGovernor);
    handlers.put(ApiEndpoint.PUT_GOVERNOR, ops::putGovernor);
    handlers.put(ApiEndpoint.METRICS, ops::metrics);
    handlers.put(ApiEndpoint.OPENAPI, ops::openApi);
    // the dashboard's feeds and views (issue 15)
    events =
        new RunEventStreams(
                system,
                runs,
                mapper,
                view ->
                    ApiViews.run(
                        mapper, view, ApiViews.GovernorView.of(governor.get(), view.governor())),
                maxEventStreams(system))
            .start();
    RunReport report = new RunReport(mapper, queries, metered, scopes, blocking);
    ClusterStatus cluster = new ClusterStatus(system);
    CallerRole role = new CallerRole(settings);
    handlers.put(ApiEndpoint.RUN_LIST_EVENTS, events::runList);
    handlers.put(ApiEndpoint.RUN_EVENTS, call -> events.run(call, run.requireRun(call)));
    handlers.put(ApiEndpoint.RUN_REPORT, call -> report.report(call, run.requireRun(call)));
    handlers.put(ApiEndpoint.CLUSTER, cluster::cluster);
    handlers.put(ApiEndpoint.WHOAMI, role::whoami);
    for (ApiEndpoint endpoint : ApiEndpoint.values()) {
      if (!handlers.containsKey(endpoint)) {
        throw new IllegalStateException("no handler for " + endpoint);
      }
    }
    metrics.governor(governor::get);
  }

  private static int maxEventStreams(ActorSystem<?> system) {
    String key = "fencekeeper.http.max-event-streams";
    var config = system.settings().config();
    return config.hasPath(key) ? config.getInt(key) : RunEventStreams.DEFAULT_MAX_STREAMS;
  }

  /**
   * Starts the API of a node with fresh metrics; see {@link #start(FencekeeperNode, ApiSettings,
   * ApiMetrics)}.
   */
  public static CompletionStage<ServerBinding> start(FencekeeperNode node, ApiSettings settings) {
    return start(node, settings, new ApiMetrics());
  }

  /**
   * Binds the API on {@code settings.host():settings.port()} (port 0 picks a free one). Pass the
   * same {@link ApiMetrics} the node's workers report to, so that /metrics shows their provider
   * calls. The binding is released, and the API's resources closed, by the node's coordinated
   * shutdown.
   */
  public static CompletionStage<ServerBinding> start(
      FencekeeperNode node, ApiSettings settings, ApiMetrics metrics) {
    ActorSystem<?> system = node.system();
    ExecutorService blocking =
        Executors.newFixedThreadPool(
            2,
            runnable -> {
              Thread thread = new Thread(runnable, "fencekeeper-api-blocking");
              thread.setDaemon(true);
              return thread;
            });
    // the node owns the run_item store and its pool; the API only reads through it
    RunItemStore queries = node.runItems();
    HttpApi api =
        new HttpApi(
            system,
            settings,
            node.runs(),
            node.items(),
            new ItemAudit(system),
            new RunScopes(system),
            queries,
            blocking,
            metrics,
            // the node's configured caps until the coordinator's (PUT /api/governor) are read
            new AtomicReference<>(
                new GovernorSettings(
                    node.settings().governor().normalCap(),
                    node.settings().governor().burstCap(),
                    node.settings().governor().minCap())));
    CompletionStage<ServerBinding> binding =
        Http.get(system)
            .newServerAt(settings.host(), settings.port())
            .bind(concat(WebAssets.load().route(), api.route()));
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseServiceUnbind(),
            "fencekeeper-http-api-unbind",
            () ->
                binding
                    .whenComplete((bound, failure) -> api.events.close())
                    .thenCompose(bound -> bound.unbind())
                    .exceptionally(failure -> Done.getInstance())
                    .thenApply(
                        done -> {
                          blocking.shutdown();
                          return Done.getInstance();
                        }));
    return binding.whenComplete(
        (bound, failure) -> {
          if (failure == null) {
            log.info(
                "HTTP API listening on {} ({})",
                bound.localAddress(),
                settings.tokenRequired()
                    ? "bearer token required for mutations"
                    : "loopback, no token");
          } else {
            api.events.close();
            blocking.shutdown();
          }
        });
  }

  Route route() {
    return handleExceptions(
        exceptionHandler(),
        () ->
            handleRejections(
                rejectionHandler(),
                () ->
                    extractRequest(
                        request ->
                            withSizeLimit(
                                settings.maxBodyBytes(),
                                () ->
                                    extractStrictEntity(
                                        Duration.ofSeconds(10),
                                        settings.maxBodyBytes(),
                                        strict ->
                                            completeWithFuture(
                                                respond(request, strict.getData().toArray())))))));
  }

  /** Finds the endpoint, checks the token, runs the handler; every outcome is a response. */
  CompletionStage<HttpResponse> respond(HttpRequest request, byte[] body) {
    ApiEndpoint endpoint = null;
    CompletionStage<ApiResponse> answer;
    try {
      List<String> segments = new ArrayList<>();
      request.getUri().pathSegments().forEach(segments::add);
      List<ApiEndpoint> pathMatches = new ArrayList<>();
      List<String> params = null;
      String method = request.method().name();
      for (ApiEndpoint candidate : ApiEndpoint.values()) {
        List<String> matched = candidate.match(segments);
        if (matched != null) {
          pathMatches.add(candidate);
          if (candidate.method().equals(method)) {
            endpoint = candidate;
            params = matched;
          }
        }
      }
      if (pathMatches.isEmpty()) {
        throw new ApiError(
            404, "not_found", "no such endpoint: " + ApiIds.abbreviate(request.getUri().path()));
      }
      if (endpoint == null) {
        throw new ApiError(
            405,
            "method_not_allowed",
            method
                + " is not allowed here; use "
                + pathMatches.stream().map(ApiEndpoint::method).toList(),
            Map.of("allow", pathMatches.stream().map(ApiEndpoint::method).toList()));
      }
      if (endpoint.mutating()) {
        authorize(request);
      }
      String authorization = request.getHeader("Authorization").map(h -> h.value()).orElse("");
      ApiCall call = new ApiCall(endpoint, params, query(request), body, authorization);
      answer = handlers.get(endpoint).apply(call);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    ApiEndpoint matched = endpoint;
    return answer
        .handle((response, failure) -> failure == null ? response : failureResponse(failure))
        .thenApply(
            response -> {
              metrics.httpRequest(
                  matched == null ? "none" : matched.name().toLowerCase(), response.status());
              return toHttp(response);
            });
  }

  /** Invariant: a missing or wrong token changes nothing, so it is checked before the body. */
  private void authorize(HttpRequest request) {
    if (!settings.tokenRequired()) {
      return;
    }
    String presented = request.getHeader("Authorization").map(h -> h.value()).orElse("");
    // constant time: the comparison must not tell an attacker how many characters were right
    if (!MessageDigest.isEqual(expectedAuthorization, presented.getBytes(StandardCharsets.UTF_8))) {
      throw new ApiError(
          401,
          "unauthorized",
          presented.isEmpty()
              ? "this endpoint changes state and needs 'Authorization: Bearer <token>'"
              : "the bearer token is not valid");
    }
  }

  private static Map<String, String> query(HttpRequest request) {
    Map<String, List<String>> multi;
    try {
      multi = request.getUri().query().toMultiMap();
    } catch (RuntimeException e) {
      throw new ApiError(400, "bad_request", "the query string cannot be parsed");
    }
    Map<String, String> single = new HashMap<>();
    multi.forEach(
        (name, values) -> {
          if (values.size() > 1) {
            throw ApiError.badRequest(
                name, "query parameter '" + name + "' is given more than once");
          }
          single.put(name, values.get(0));
        });
    return single;
  }

  private ApiResponse failureResponse(Throwable failure) {
    Throwable cause = RunEndpoints.unwrap(failure);
    if (cause instanceof ApiError error) {
      return ApiResponse.json(error.status(), error.body());
    }
    if (cause instanceof TimeoutException) {
      log.warn("HTTP API request timed out: {}", cause.getMessage());
      return ApiResponse.json(
          503,
          new ApiError(
                  503,
                  "unavailable",
                  "the cluster did not answer in time; whether the command was applied is unknown:"
                      + " read the item before retrying")
              .body());
    }
    // no refusal of input is a 500; a failure of the node itself is "unavailable", and logged
    log.error("HTTP API request failed", cause);
    return ApiResponse.json(
        503,
        new ApiError(
                503,
                "unavailable",
                "the node could not answer: " + cause.getClass().getSimpleName())
            .body());
  }

  private HttpResponse toHttp(ApiResponse response) {
    HttpResponse http = HttpResponse.create().withStatus(StatusCodes.get(response.status()));
    if (response.stream() != null) {
      return response.stream().toHttp(http);
    }
    if (response.text() != null) {
      return http.withEntity(
          HttpEntities.create(
              ContentTypes.parse(response.contentType() + "; charset=utf-8"),
              response.text().getBytes(StandardCharsets.UTF_8)));
    }
    if (response.json() == null) {
      return http;
    }
    if (response.status() == 401) {
      http = http.addHeader(RawHeader.create("WWW-Authenticate", "Bearer realm=\"fencekeeper\""));
    }
    try {
      return http.withEntity(
          HttpEntities.create(
              ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(response.json())));
    } catch (JsonProcessingException e) {
      log.error("could not write a response", e);
      return HttpResponse.create()
          .withStatus(StatusCodes.SERVICE_UNAVAILABLE)
          .withEntity(
              HttpEntities.create(
                  ContentTypes.APPLICATION_JSON,
                  "{\"error\":\"unavailable\",\"message\":\"the response could not be written\"}"));
    }
  }

  private Route envelope(int status, String code, String message) {
    return complete(toHttp(ApiResponse.json(status, new ApiError(status, code, message).body())));
  }

  private ExceptionHandler exceptionHandler() {
    return ExceptionHandler.newBuilder()
        .match(
            EntityStreamSizeException.class,
            e ->
                envelope(
                    413,
                    "body_too_large",
                    "the request body exceeds " + settings.maxBodyBytes() + " bytes"))
        .match(
            org.apache.pekko.http.scaladsl.model.IllegalRequestException.class,
            e ->
                e.status().intValue() == 413 || e.info().summary().startsWith("Request too large")
                    ? envelope(
                        413,
                        "body_too_large",
                        "the request body exceeds " + settings.maxBodyBytes() + " bytes")
                    : envelope(
                        400, "bad_request", "the request is malformed: " + e.info().summary()))
        .matchAny(
            e -> {
              log.error("HTTP API route failed", e);
              return envelope(503, "unavailable", "the node could not answer the request");
            })
        .build();
  }

  private RejectionHandler rejectionHandler() {
    return RejectionHandler.newBuilder()
        .handleAll(
            Rejection.class,
            rejections -> envelope(400, "bad_request", "the request was refused: " + rejections))
        .handleNotFound(envelope(404, "not_found", "no such endpoint"))
        .build();
  }
}

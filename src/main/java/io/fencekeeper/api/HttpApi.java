package io.fencekeeper.api;

import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.extractStrictEntity;
import static org.apache.pekko.http.javadsl.server.Directives.handleExceptions;
import static org.apache.pekko.http.javadsl.server.Directives.handleRejections;
import static org.apache.pekko.http.javadsl.server.Directives.withRequestTimeoutResponse;
import static org.apache.pekko.http.javadsl.server.Directives.withSizeLimit;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.DaemonThreads;
import io.fencekeeper.api.http.ApiAuth;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiEndpoint;
import io.fencekeeper.api.http.ApiErrors;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.ApiRouter;
import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.api.http.CallerRole;
import io.fencekeeper.api.http.HttpConnections;
import io.fencekeeper.api.items.ApiViews;
import io.fencekeeper.api.items.ItemEndpoints;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.api.metrics.MeteredItemGateway;
import io.fencekeeper.api.ops.ApiReadinessCheck;
import io.fencekeeper.api.ops.ArchiveEndpoints;
import io.fencekeeper.api.ops.ClusterStatus;
import io.fencekeeper.api.ops.OpsEndpoints;
import io.fencekeeper.api.ops.ProviderEndpoints;
import io.fencekeeper.api.runs.ApiArchiveViews;
import io.fencekeeper.api.runs.ItemPages;
import io.fencekeeper.api.runs.RunEndpoints;
import io.fencekeeper.api.runs.RunIntakeSettings;
import io.fencekeeper.api.runs.RunReport;
import io.fencekeeper.api.runs.RunUploads;
import io.fencekeeper.api.runs.VerifyEndpoints;
import io.fencekeeper.api.stream.RunEventStreams;
import io.fencekeeper.api.stream.StreamSlots;
import io.fencekeeper.api.web.WebAssets;
import io.fencekeeper.archive.RetentionKeeper;
import io.fencekeeper.item.ExternalWorkers;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemTrails;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.budget.ProviderBudgets;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunService;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.verify.Verifications;
import java.io.InputStream;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's HTTP API (docs/design.md, "HTTP API") on pekko-http: every route of {@link
 * ApiEndpoint}, JSON in and out, the bearer token on mutating endpoints, and one error envelope for
 * every refusal. Nothing a client sends reaches Pekko's default error pages, and no refusal is a
 * 500.
 */
public final class HttpApi {

  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  private final ApiSettings settings;
  private final ApiMetrics metrics;
  private final ApiRouter router;
  private final ApiAuth auth;
  private final ApiErrors errors;
  private final RunIntakeSettings intake;
  private final RunEventStreams events;

  HttpApi(
      ActorSystem<?> system,
      ApiSettings settings,
      RunService runs,
      ItemGateway items,
      ItemAudit audit,
      ItemTrails trails,
      RunItemStore queries,
      ExecutorService blocking,
      ApiMetrics metrics,
      AtomicReference<GovernorSettings> governor,
      RunIntakeSettings intake,
      ProviderBudgets budgets,
      Verifications verifications,
      ActorRef<RetentionKeeper.Command> retention,
      ExternalWorkers words) {
    ObjectMapper mapper = ApiJson.mapper();
    this.settings = settings;
    this.intake = intake;
    this.metrics = metrics;
    this.auth = new ApiAuth(settings);
    this.errors = new ApiErrors(mapper, settings.maxBodyBytes());
    ItemGateway metered = new MeteredItemGateway(items, metrics, "api");
    ItemPages pages = new ItemPages(queries, trails::views, blocking);
    RunEndpoints run =
        new RunEndpoints(
            mapper, runs, pages, governor::get, metrics, settings.maxLease(), intake, words);
    ItemEndpoints item =
        new ItemEndpoints(
            mapper, runs, metered, audit, queries, blocking, settings.maxLease(), words);
    OpsEndpoints ops = new OpsEndpoints(mapper, runs, metrics, governor);
    Map<ApiEndpoint, ApiRouter.Handler> handlers = new EnumMap<>(ApiEndpoint.class);
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
    handlers.put(ApiEndpoint.GET_FLEET, ops::getFleet);
    handlers.put(ApiEndpoint.PUT_GOVERNOR, ops::putGovernor);
    ProviderEndpoints providers = new ProviderEndpoints(mapper, budgets, metrics);
    handlers.put(ApiEndpoint.LIST_PROVIDERS, providers::list);
    handlers.put(ApiEndpoint.PUT_PROVIDER, providers::put);
    VerifyEndpoints verify = new VerifyEndpoints(mapper, verifications, run);
    handlers.put(ApiEndpoint.VERIFY_RUN, verify::start);
    handlers.put(ApiEndpoint.LIST_VERIFICATIONS, verify::list);
    handlers.put(ApiEndpoint.GET_VERIFICATION, verify::get);
    handlers.put(ApiEndpoint.VERIFICATION_FINDINGS, verify::findings);
    handlers.put(
        ApiEndpoint.METRICS,
        call ->
            providers
                .refreshMetrics()
                .thenCompose(refreshed -> metrics.refreshVerifications(verifications))
                .thenCompose(refreshed -> ops.metrics(call)));
    handlers.put(ApiEndpoint.OPENAPI, ops::openApi);
    // the dashboard's feeds and views
    events =
        new RunEventStreams(
                system,
                runs,
                mapper,
                view ->
                    ApiViews.run(
                        mapper, view, ApiViews.GovernorView.of(governor.get(), view.governor())),
                eventStreamSlots(system))
            .start();
    RunReport report = new RunReport(mapper, queries, trails::views, blocking);
    ClusterStatus cluster = new ClusterStatus(system);
    CallerRole role = new CallerRole(settings);
    handlers.put(ApiEndpoint.RUN_LIST_EVENTS, events::runList);
    handlers.put(ApiEndpoint.RUN_EVENTS, call -> events.run(call, run.requireRun(call)));
    handlers.put(ApiEndpoint.RUN_REPORT, call -> report.report(call, run.requireItemsHere(call)));
    handlers.put(ApiEndpoint.CLUSTER, cluster::cluster);
    handlers.put(ApiEndpoint.PRUNE_ARCHIVE, new ArchiveEndpoints(mapper, system, retention)::prune);
    handlers.put(ApiEndpoint.WHOAMI, role::whoami);
    this.router = new ApiRouter(handlers);
    metrics.governor(governor::get);
    metrics.eventStreams(events::openStreams);
  }

  /** fencekeeper.http.max-event-streams and its caps per token and per remote address. */
  private static StreamSlots eventStreamSlots(ActorSystem<?> system) {
    var config = system.settings().config();
    String key = "fencekeeper.http.max-event-streams";
    return new StreamSlots(
        config.hasPath(key) ? config.getInt(key) : RunEventStreams.DEFAULT_MAX_STREAMS,
        config.hasPath(key + "-per-token") ? config.getInt(key + "-per-token") : 0,
        config.hasPath(key + "-per-address") ? config.getInt(key + "-per-address") : 0);
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
        Executors.newFixedThreadPool(2, DaemonThreads.named("fencekeeper-api-blocking"));
    // the node owns the run_item store and its pool; the API only reads through it
    RunItemStore queries = node.runItems();
    ItemAudit audit = new ItemAudit(system);
    // many items' journals in one query: the item pages and the archive
    ItemTrails trails = new ItemTrails(system, queries.dataSource());
    // the node's configured caps until the coordinator's (PUT /api/governor) are read
    AtomicReference<GovernorSettings> governor = new AtomicReference<>(node.settings().governor());
    HttpApi api =
        new HttpApi(
            system,
            settings,
            node.runs(),
            node.items(),
            audit,
            trails,
            queries,
            blocking,
            metrics,
            governor,
            RunIntakeSettings.fromConfig(system.settings().config()),
            node.budgets(),
            node.verifications(),
            startRetention(node, trails, governor, metrics),
            node.externalWorkers());
    CompletionStage<ServerBinding> binding =
        new HttpConnections(system, HttpConnections.Limits.of(system), metrics)
            .bind(settings.host(), settings.port(), concat(WebAssets.load().route(), api.route()));
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseServiceUnbind(),
            "fencekeeper-http-api-unbind",
            () ->
                binding
                    .whenComplete(
                        (bound, failure) -> {
                          // not ready from the unbind on: a balancer stops sending new calls
                          ApiReadinessCheck.serving(system.classicSystem(), false);
                          api.events.close();
                        })
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
            ApiReadinessCheck.serving(system.classicSystem(), true);
            log.info(
                "HTTP API listening on {} ({})",
                bound.localAddress(),
                settings.tokenRequired()
                    ? "bearer token required on every call"
                    : "loopback, no token");
          } else {
            api.events.close();
            blocking.shutdown();
          }
        });
  }

  /**
   * The retention keeper singleton (docs/design.md, "Retention and the archive") on every node that
   * serves the API: its archives hold runs, report lines and audits in the API's own shapes.
   */
  private static ActorRef<RetentionKeeper.Command> startRetention(
      FencekeeperNode node,
      ItemTrails trails,
      AtomicReference<GovernorSettings> governor,
      ApiMetrics metrics) {
    ActorSystem<?> system = node.system();
    return RetentionKeeper.initSingleton(
        system,
        new RetentionKeeper.Dependencies(
            system,
            node.coordinator(),
            node.endedRuns(),
            node.runItems(),
            trails,
            new ApiArchiveViews(ApiJson.mapper(), governor::get),
            node.retention(),
            node.clock(),
            system.address().toString(),
            metrics));
  }

  Route route() {
    // the server's own answer when pekko.http.server.request-timeout passes is the envelope too
    return withRequestTimeoutResponse(errors::requestTimedOut, this::handledRoute);
  }

  private Route handledRoute() {
    return handleExceptions(
        errors.exceptionHandler(),
        () ->
            handleRejections(
                errors.rejectionHandler(),
                () ->
                    extractRequest(
                        request ->
                            // a text/csv POST /api/runs streams its scope: see RunUploads
                            RunUploads.isUpload(request)
                                ? RunUploads.route(
                                    intake, upload -> respond(request, new byte[0], upload))
                                : withSizeLimit(
                                    settings.maxBodyBytes(),
                                    () ->
                                        extractStrictEntity(
                                            Duration.ofSeconds(10),
                                            settings.maxBodyBytes(),
                                            strict ->
                                                completeWithFuture(
                                                    respond(
                                                        request, strict.getData().toArray())))))));
  }

  /** Finds the endpoint, checks the caller, runs the handler; every outcome is a response. */
  CompletionStage<HttpResponse> respond(HttpRequest request, byte[] body) {
    return respond(request, body, null);
  }

  private CompletionStage<HttpResponse> respond(
      HttpRequest request, byte[] body, Supplier<InputStream> upload) {
    ApiEndpoint endpoint = null;
    CompletionStage<ApiResponse> answer;
    try {
      ApiRouter.Match match = router.match(request);
      endpoint = match.endpoint();
      ApiAuth.Role role = auth.authorize(request, endpoint, upload != null);
      ApiCall call =
          new ApiCall(
              endpoint,
              match.params(),
              ApiRouter.query(request),
              body,
              upload,
              role,
              ApiAuth.peer(request));
      answer = router.handler(endpoint).apply(call);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    ApiEndpoint matched = endpoint;
    return answer
        .handle((response, failure) -> failure == null ? response : errors.failureResponse(failure))
        .thenApply(
            response -> {
              metrics.httpRequest(
                  matched == null ? "none" : matched.name().toLowerCase(), response.status());
              return errors.toHttp(response);
            });
  }
}

package io.fencekeeper.api.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.JsonBody;
import io.fencekeeper.api.items.ApiViews;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunFilter;
import io.fencekeeper.run.RunService;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.governor.GovernorSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Governor caps, the fleet's signal, Prometheus metrics and the OpenAPI description. */
public final class OpsEndpoints {

  private static final Logger log = LoggerFactory.getLogger(OpsEndpoints.class);
  static final String OPENAPI_RESOURCE = "/io/fencekeeper/api/openapi.yaml";

  private final ObjectMapper mapper;
  private final RunService runs;
  private final ApiMetrics metrics;
  private final AtomicReference<GovernorSettings> governor;
  private final String openApi;

  public OpsEndpoints(
      ObjectMapper mapper,
      RunService runs,
      ApiMetrics metrics,
      AtomicReference<GovernorSettings> governor) {
    this.mapper = mapper;
    this.runs = runs;
    this.metrics = metrics;
    this.governor = governor;
    this.openApi = openApiText();
  }

  public static String openApiText() {
    try (InputStream in = OpsEndpoints.class.getResourceAsStream(OPENAPI_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(OPENAPI_RESOURCE + " is missing from the jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public CompletionStage<ApiResponse> getGovernor(ApiCall call) {
    return runs.governor().thenApply(this::governorResponse);
  }

  /** The caps the coordinator holds, and each running run's decision. */
  private ApiResponse governorResponse(RunCoordinator.GovernorReply reply) {
    GovernorSettings caps = reply.settings();
    governor.set(caps);
    Map<String, Object> body = new java.util.LinkedHashMap<>();
    body.put("normalCap", caps.normalCap());
    body.put("burstCap", caps.burstCap());
    body.put("minCap", caps.minCap());
    Map<String, Object> decisions = new java.util.TreeMap<>();
    reply
        .runs()
        .forEach((runId, view) -> decisions.put(runId, ApiViews.GovernorView.of(caps, view)));
    body.put("runs", decisions);
    return ApiResponse.ok(body);
  }

  /** The nodes the fleet wants now, why, and each running run's need behind it. */
  public CompletionStage<ApiResponse> getFleet(ApiCall call) {
    return runs.fleet().thenApply(ApiResponse::ok);
  }

  public CompletionStage<ApiResponse> putGovernor(ApiCall call) {
    JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("normalCap", "burstCap", "minCap"));
    long max = GovernorSettings.MAX_CAP;
    int normal = (int) body.requireLong("normalCap", 1, max);
    int burst = (int) body.requireLong("burstCap", 1, max);
    int min = (int) body.requireLong("minCap", 1, max);
    List<String> problems = GovernorSettings.capProblems(normal, burst, min);
    if (!problems.isEmpty()) {
      throw new ApiError(
          422, "invalid_governor", String.join("; ", problems), Map.of("problems", problems));
    }
    GovernorSettings next = governor.get().withCaps(normal, burst, min);
    log.info("governor caps changed to {} by an operator", next);
    return runs.setGovernor(next).thenApply(this::governorResponse);
  }

  /**
   * The figures of the runs that have not ended, and of the last ended ones (a scrape that comes
   * after a run ended still sees how it ended), never of the whole history.
   */
  public CompletionStage<ApiResponse> metrics(ApiCall call) {
    CompletionStage<Void> fleet =
        runs.fleet()
            .handle(
                (view, failure) -> {
                  if (failure == null) {
                    metrics.updateFleet(view);
                  } else {
                    log.warn("metrics scrape without a fresh fleet signal: {}", failure.toString());
                  }
                  return null;
                });
    return runs.active()
        .thenCombine(
            runs.list(
                new RunFilter(
                    java.util.EnumSet.of(
                        RunState.SUCCEEDED, RunState.PARTIAL, RunState.FAILED, RunState.CANCELLED),
                    null,
                    null,
                    null,
                    null,
                    RECENT_ENDED_RUNS)),
            (active, ended) -> {
              java.util.Map<String, io.fencekeeper.run.RunView> views = new java.util.TreeMap<>();
              ended.runs().forEach(run -> views.put(run.runId(), run));
              active.forEach(run -> views.put(run.runId(), run));
              return List.copyOf(views.values());
            })
        .handle(
            (views, failure) -> {
              if (failure == null) {
                metrics.updateRuns(views);
              } else {
                // a scrape must still answer: the figures that depend on runs stay as they were
                log.warn("metrics scrape without fresh run figures: {}", failure.toString());
              }
              return null;
            })
        .thenCombine(
            fleet,
            (runsRead, fleetRead) ->
                ApiResponse.text(metrics.scrape(), "text/plain; version=0.0.4"));
  }

  /** How many of the last ended runs {@code /metrics} shows besides the ones that run. */
  static final int RECENT_ENDED_RUNS = 20;

  public CompletionStage<ApiResponse> openApi(ApiCall call) {
    return CompletableFuture.completedFuture(ApiResponse.text(openApi, "application/yaml"));
  }
}

package io.fencekeeper.api.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.JsonBody;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.provider.budget.ProviderBudget;
import io.fencekeeper.provider.budget.ProviderBudgets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The provider budgets of docs/design.md, "Provider budgets": every provider's budget, who holds
 * its permits, each run's share, throttled answers and decisions; an operator's new budget,
 * journaled by the keeper.
 */
public final class ProviderEndpoints {

  private static final Logger log = LoggerFactory.getLogger(ProviderEndpoints.class);

  private final ObjectMapper mapper;
  private final ProviderBudgets budgets;
  private final ApiMetrics metrics;

  public ProviderEndpoints(ObjectMapper mapper, ProviderBudgets budgets, ApiMetrics metrics) {
    this.mapper = mapper;
    this.budgets = budgets;
    this.metrics = metrics;
  }

  public CompletionStage<ApiResponse> list(ApiCall call) {
    return budgets
        .views()
        .thenApply(
            views -> {
              metrics.updateProviders(views);
              Map<String, Object> body = new LinkedHashMap<>();
              body.put("providers", views);
              return ApiResponse.ok(body);
            });
  }

  public CompletionStage<ApiResponse> put(ApiCall call) {
    String name = call.param(0);
    ProviderName.problem(name)
        .ifPresent(
            problem -> {
              throw ApiError.notFound("unknown_provider", "no such provider: " + problem);
            });
    JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("maxInFlight", "maxRate"));
    long maxInFlight = body.requireLong("maxInFlight", 1, ProviderBudget.MAX_IN_FLIGHT);
    long maxRate = body.optionalLong("maxRate", 0, ProviderBudget.MAX_RATE).orElse(0L);
    List<String> problems = ProviderBudget.problems(maxInFlight, maxRate);
    if (!problems.isEmpty()) {
      throw new ApiError(
          422, "invalid_budget", String.join("; ", problems), Map.of("problems", problems));
    }
    ProviderBudget budget = new ProviderBudget((int) maxInFlight, (int) maxRate);
    log.info("provider {}: budget set to {} by an operator", name, budget);
    return budgets
        .set(name, budget)
        .thenApply(
            reply -> {
              if (reply instanceof BudgetKeeper.UnknownProvider unknown) {
                throw new ApiError(
                    404,
                    "unknown_provider",
                    "no provider " + name + "; known: " + unknown.known(),
                    Map.of("known", unknown.known()));
              }
              return ApiResponse.ok(((BudgetKeeper.BudgetSet) reply).provider());
            });
  }

  /** Before a scrape: the providers' figures, or the last ones when the keeper does not answer. */
  public CompletionStage<Void> refreshMetrics() {
    return budgets
        .views()
        .handle(
            (views, failure) -> {
              if (failure == null) {
                metrics.updateProviders(views);
              } else {
                log.warn("metrics scrape without fresh provider figures: {}", failure.toString());
              }
              return null;
            });
  }
}

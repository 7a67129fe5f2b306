package io.fencekeeper.api.runs;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiErrors;
import io.fencekeeper.api.http.ApiIds;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.JsonBody;
import io.fencekeeper.api.items.ApiViews;
import io.fencekeeper.api.items.ItemEndpoints;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.item.ExternalWorkers;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.ClaimNext;
import io.fencekeeper.run.Counts;
import io.fencekeeper.run.CreateOutcome;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunFilter;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunService;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.run.scope.ScopeException;
import io.fencekeeper.run.scope.ScopeRefused;
import io.fencekeeper.run.scope.ScopeTooLarge;
import io.fencekeeper.worker.WorkProtocol;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;

/**
 * The run endpoints of docs/design.md, "HTTP API": create, list, get, resume, cancel, items,
 * claim-next.
 */
public final class RunEndpoints {

  private static final Set<String> CREATE_FIELDS =
      Set.of(
          "job", "businessDate", "deadline", "maxAttempts", "maxFailedItems", "scope", "provider");

  private final ObjectMapper mapper;
  private final RunService runs;
  private final ItemPages pages;
  private final Supplier<GovernorSettings> governor;
  private final ApiMetrics metrics;
  private final Duration maxLease;
  private final RunIntakeSettings intake;
  private final ExternalWorkers words;

  public RunEndpoints(
      ObjectMapper mapper,
      RunService runs,
      ItemPages pages,
      Supplier<GovernorSettings> governor,
      ApiMetrics metrics,
      Duration maxLease,
      RunIntakeSettings intake,
      ExternalWorkers words) {
    this.mapper = mapper;
    this.runs = runs;
    this.pages = pages;
    this.governor = governor;
    this.metrics = metrics;
    this.maxLease = maxLease;
    this.intake = intake;
    this.words = words;
  }

  private Object view(RunView run) {
    return ApiViews.run(mapper, run, ApiViews.GovernorView.of(governor.get(), run.governor()));
  }

  public CompletionStage<ApiResponse> create(ApiCall call) {
    if (call.upload() != null) {
      return createFromUpload(call);
    }
    JsonBody body = JsonBody.parse(mapper, call.body(), CREATE_FIELDS);
    String job = body.requireString("job", 128);
    LocalDate businessDate = body.requireDate("businessDate");
    Instant deadline = body.requireInstant("deadline");
    int maxAttempts = body.optionalInt("maxAttempts", 1, 100, 5);
    int maxFailedItems = body.optionalInt("maxFailedItems", 0, Integer.MAX_VALUE, 0);
    Scope scope = ScopeBody.read(body.requireObject("scope"));
    String provider = body.optionalString("provider", 63).orElse(null);
    RunRequest request =
        new RunRequest(job, businessDate, scope, deadline, maxAttempts, maxFailedItems, provider);
    return runs.create(request, null, intake.createWait()).handle(this::created);
  }

  /** {@code text/csv}: parameters from the query, accounts streamed from the body. */
  private CompletionStage<ApiResponse> createFromUpload(ApiCall call) {
    if (call.body().length > 0) {
      throw new IllegalStateException("an upload's body is a stream");
    }
    RunRequest request = RunUploads.request(call.query());
    InputStream upload = call.upload().get();
    return runs.create(request, upload, intake.createWait())
        .whenComplete((outcome, failure) -> closeQuietly(upload))
        .handle(this::created);
  }

  /**
   * 201 created, 200 the same run again, 202 still STAGING (the client polls {@code GET
   * /api/runs/{runId}} or sends the same create again, which joins the staging), 409 a conflict.
   */
  private ApiResponse created(CreateOutcome outcome, Throwable failure) {
    if (failure != null) {
      throw createFailure(failure);
    }
    if (outcome instanceof CreateOutcome.StillStaging staging) {
      return ApiResponse.json(202, view(staging.run()));
    }
    RunCoordinator.CreateReply reply = ((CreateOutcome.Answered) outcome).reply();
    if (reply instanceof RunCoordinator.Created created) {
      return ApiResponse.json(201, view(created.run()));
    }
    if (reply instanceof RunCoordinator.AlreadyExists existing) {
      return ApiResponse.ok(view(existing.run()));
    }
    RunCoordinator.Conflict conflict = (RunCoordinator.Conflict) reply;
    throw new ApiError(409, "run_conflict", conflict.message());
  }

  private static void closeQuietly(InputStream upload) {
    try {
      upload.close(); // cancels what the client has not sent yet
    } catch (IOException e) {
      // nothing more to read either way
    }
  }

  private RuntimeException createFailure(Throwable failure) {
    Throwable cause = ApiErrors.unwrap(failure);
    for (Throwable c = cause; c != null; c = c.getCause()) {
      if (c instanceof EntityStreamSizeException) {
        return new ApiError(
            413,
            "body_too_large",
            "the upload exceeds "
                + intake.maxUploadBytes()
                + " bytes (fencekeeper.http.max-upload-bytes)");
      }
    }
    if (cause instanceof RunService.InvalidRunRequest invalid) {
      Map<String, Object> extra = new LinkedHashMap<>();
      invalid.field().ifPresent(field -> extra.put("field", field));
      extra.put("problems", invalid.problems());
      return new ApiError(422, "invalid_run", invalid.getMessage(), extra);
    }
    if (cause instanceof ScopeRefused refused) {
      return new ApiError(
          400, "invalid_scope", refused.getMessage(), Map.of("field", refused.field()));
    }
    if (cause instanceof ScopeTooLarge tooLarge) {
      return new ApiError(
          413,
          "scope_too_large",
          tooLarge.getMessage(),
          Map.of("field", "scope", "limit", tooLarge.limit()));
    }
    if (cause instanceof ScopeException scope) {
      return new ApiError(
          422, "invalid_scope", scope.getMessage(), Map.of("problems", scope.problems()));
    }
    return cause instanceof RuntimeException runtime ? runtime : new CompletionException(cause);
  }

  /**
   * One page of the runs, newest first, filtered by {@code state} (comma-separated), {@code job}
   * and business date {@code from} / {@code to}; {@code cursor} is the previous page's {@code
   * next}.
   */
  public CompletionStage<ApiResponse> list(ApiCall call) {
    RunFilter filter = RunListQuery.filter(call.query());
    return runs.list(filter)
        .thenApply(
            page -> {
              Map<String, Object> body = new LinkedHashMap<>();
              body.put("runs", page.runs().stream().map(this::view).toList());
              body.put("next", page.next().map(RunFilter.Cursor::token).orElse(null));
              return ApiResponse.ok(body);
            });
  }

  public CompletionStage<ApiResponse> get(ApiCall call) {
    return requireRun(call).thenApply(run -> ApiResponse.ok(view(run)));
  }

  public CompletionStage<RunView> requireRun(ApiCall call) {
    String runId = ApiIds.runId(call.param(0));
    return runs.get(runId)
        .thenApply(
            found -> found.orElseThrow(() -> ApiError.notFound("unknown_run", "no run " + runId)));
  }

  /** The run, if its items are still here (not archived by retention; 410 otherwise). */
  public CompletionStage<RunView> requireItemsHere(ApiCall call) {
    return requireRun(call).thenApply(ApiViews::requireItemsHere);
  }

  public CompletionStage<ApiResponse> resume(ApiCall call) {
    String runId = ApiIds.runId(call.param(0));
    Instant deadline =
        JsonBody.parse(mapper, call.body(), Set.of("deadline")).requireInstant("deadline");
    return runs.resume(runId, deadline).thenApply(this::control);
  }

  public CompletionStage<ApiResponse> cancel(ApiCall call) {
    String runId = ApiIds.runId(call.param(0));
    if (call.body().length > 0) {
      JsonBody.parse(mapper, call.body(), Set.of());
    }
    return runs.cancel(runId).thenApply(this::control);
  }

  private ApiResponse control(RunCoordinator.ControlReply reply) {
    if (reply instanceof RunCoordinator.ControlAccepted accepted) {
      return ApiResponse.ok(view(accepted.run()));
    }
    RunCoordinator.ControlRefused refused = (RunCoordinator.ControlRefused) reply;
    int status =
        switch (refused.error()) {
          case "unknown_run" -> 404;
          case "invalid_deadline" -> 422;
          default -> 409;
        };
    Map<String, Object> extra =
        refused.error().equals("invalid_deadline") ? Map.of("field", "deadline") : Map.of();
    throw new ApiError(status, refused.error(), refused.message(), extra);
  }

  public CompletionStage<ApiResponse> items(ApiCall call) {
    String runId = ApiIds.runId(call.param(0));
    WorkItem.Status status = status(call.query().get("status"));
    int limit = (int) ApiIds.longParam(call.query(), "limit", 1, ItemPages.MAX_LIMIT, 100);
    // a scope has at most max-items-per-run items: the next page starts after "after" without
    // overflowing, so the largest int cannot wrap around to the first page
    int after = (int) ApiIds.longParam(call.query(), "after", -1, Integer.MAX_VALUE - 1, -1);
    for (String name : call.query().keySet()) {
      if (!List.of("status", "limit", "after").contains(name)) {
        throw ApiError.unknownParameter(name);
      }
    }
    return requireItemsHere(call)
        .thenCompose(run -> pages.page(run, status, after, limit))
        .thenApply(ApiResponse::ok);
  }

  private static WorkItem.Status status(String value) {
    if (value == null || value.isEmpty()) {
      return null;
    }
    try {
      return WorkItem.Status.valueOf(value.toUpperCase(java.util.Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw ApiError.badRequest(
          "status", "status must be one of pending, leased, done, failed, closed, quarantined");
    }
  }

  /**
   * claim-next (docs/external-workers.md): 200 with a lease; 204 when the run is drained (nothing
   * open for any worker: every item settled or quarantined); 429 with Retry-After when items are
   * open but none can be handed out now ({@code run_at_cap}: the run's cap is reached; {@code
   * nothing_ready}: every open item is leased or waits for a time); 503 {@code run_staging} with
   * Retry-After; 409 {@code run_ended} / {@code run_cancelled}; 410 {@code run_archived}.
   */
  public CompletionStage<ApiResponse> claimNext(ApiCall call) {
    JsonBody body =
        JsonBody.parse(mapper, call.body(), Set.of("workerId", "leaseMillis", "requestId"));
    String workerId = ItemEndpoints.requireWorker(body);
    Duration lease = body.requireLease("leaseMillis", maxLease);
    String requestId = ItemEndpoints.requestId(body);
    words.heard(workerId);
    return requireRun(call)
        .thenCompose(
            run -> {
              ApiViews.requireItemsHere(run);
              requireRunning(run);
              return runs.claimNext(run.runId(), workerId, lease, run.maxAttempts(), requestId)
                  .thenApply(answer -> claimNextAnswer(run, answer));
            });
  }

  /** A run that is not RUNNING hands nothing out: why, and whether to ask again. */
  private static void requireRunning(RunView run) {
    if (run.cancelling()) {
      throw new ApiError(
          409, "run_cancelled", "run " + run.runId() + " was CANCELLED: nothing to claim");
    }
    if (run.stopping()) {
      // too many failures or the deadline: its end state follows once its items are closed
      throw new ApiError(
          409,
          "run_ended",
          "run " + run.runId() + " is stopping (" + run.endReason() + "): nothing to claim",
          Map.of("state", run.state().name(), "reason", run.endReason()));
    }
    switch (run.state()) {
      case RUNNING -> {}
      case STAGING ->
          throw new ApiError(
              503,
              "run_staging",
              "run " + run.runId() + " is still STAGING its scope: ask again later",
              Map.of("retryAfterMillis", STAGING_RETRY.toMillis()));
      case CANCELLED ->
          throw new ApiError(
              409, "run_cancelled", "run " + run.runId() + " was CANCELLED: nothing to claim");
      default ->
          throw new ApiError(
              409,
              "run_ended",
              "run " + run.runId() + " ended " + run.state() + ": nothing to claim",
              Map.of("state", run.state().name()));
    }
  }

  private static final Duration STAGING_RETRY = Duration.ofSeconds(2);

  /** The longest Retry-After claim-next asks for: a wait it computed longer is asked again. */
  private static final Duration LONGEST_WAIT = Duration.ofSeconds(30);

  private ApiResponse claimNextAnswer(RunView run, ClaimNext.Answer answer) {
    if (answer instanceof ClaimNext.Granted granted) {
      metrics.claim("api-next", "claimed");
      return ApiResponse.ok(ApiViews.ClaimView.of(granted.claimed()));
    }
    metrics.claim("api-next", "nothing_ready");
    ClaimNext.Nothing nothing = (ClaimNext.Nothing) answer;
    Counts counts = run.counts();
    boolean settled =
        counts.done() + counts.failed() + counts.closed() + counts.quarantined() >= counts.total();
    if (nothing.why() == WorkProtocol.NothingNow.DRAINED && settled) {
      return ApiResponse.noContent();
    }
    long wait = Math.min(Math.max(100, nothing.retryAfter().toMillis()), LONGEST_WAIT.toMillis());
    if (nothing.why() == WorkProtocol.NothingNow.AT_CAP) {
      throw new ApiError(
          429,
          "run_at_cap",
          "run "
              + run.runId()
              + " has as many items in flight as its cap allows (the governor, the provider's"
              + " budget): ask again after retryAfterMillis",
          Map.of("retryAfterMillis", wait));
    }
    throw new ApiError(
        429,
        "nothing_ready",
        "every open item of run "
            + run.runId()
            + " is leased or waits for a time (a lease, a back-off): ask again after"
            + " retryAfterMillis",
        Map.of("retryAfterMillis", wait));
  }
}

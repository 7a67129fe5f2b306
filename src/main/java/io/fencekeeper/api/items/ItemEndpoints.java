package io.fencekeeper.api.items;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiIds;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.JsonBody;
import io.fencekeeper.item.ExternalWorkers;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.RequestId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunService;
import io.fencekeeper.run.RunView;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * The item endpoints: state, audit, retry, and the docs/design.md "The work item" lease commands
 * over HTTP with exactly the entity's semantics. An id that is not an item of an existing run is
 * 404 before any command is sent, so a typo never creates a journal entry for an item nobody
 * scheduled.
 */
public final class ItemEndpoints {

  private static final int MAX_KNOWN = 100_000;

  private final ObjectMapper mapper;
  private final RunService runs;
  private final ItemGateway items;
  private final ItemAudit audit;
  private final RunItemStore queries;
  private final Executor blocking;
  private final Duration maxLease;
  private final ExternalWorkers words;
  private final Set<String> knownItems = ConcurrentHashMap.newKeySet();

  public ItemEndpoints(
      ObjectMapper mapper,
      RunService runs,
      ItemGateway items,
      ItemAudit audit,
      RunItemStore queries,
      Executor blocking,
      Duration maxLease,
      ExternalWorkers words) {
    this.mapper = mapper;
    this.runs = runs;
    this.items = items;
    this.audit = audit;
    this.queries = queries;
    this.blocking = blocking;
    this.maxLease = maxLease;
    this.words = words;
  }

  /** The run of an item that exists in that run's scope; 404 otherwise. */
  private CompletionStage<RunView> requireKnown(ItemId id) {
    return runs.get(id.runId())
        .thenCompose(
            run -> {
              if (run.isEmpty()) {
                throw ApiError.notFound(
                    "unknown_item", "no item " + id + ": there is no run " + id.runId());
              }
              // an archived run's items are gone: a command would start one again from nothing
              ApiViews.requireItemsHere(run.get());
              if (knownItems.contains(id.value())) {
                return CompletableFuture.completedFuture(run.get());
              }
              String scopeId = run.get().scopeId();
              return CompletableFuture.supplyAsync(
                  () -> {
                    boolean member = queries.contains(scopeId, id.accountId(), id.cursor());
                    if (!member) {
                      throw ApiError.notFound(
                          "unknown_item", "run " + id.runId() + " has no item " + id);
                    }
                    if (knownItems.size() >= MAX_KNOWN) {
                      knownItems.clear();
                    }
                    knownItems.add(id.value());
                    return run.get();
                  },
                  blocking);
            });
  }

  /** Parses the id and body first (a 400 never waits for the item), then checks membership. */
  private CompletionStage<ApiResponse> command(
      ApiCall call, Function<RunView, CompletionStage<WorkItem.Reply>> send, ItemId id) {
    return requireKnown(id).thenCompose(send).thenApply(ItemReplies::toResponse);
  }

  /**
   * A holder's command that may end its attempt (complete, fail, release): once accepted, the run's
   * dispatchers learn how the attempt ended.
   */
  private CompletionStage<ApiResponse> ending(
      ApiCall call, Function<RunView, CompletionStage<WorkItem.Reply>> send, ItemId id) {
    return requireKnown(id)
        .thenCompose(
            run ->
                send.apply(run)
                    .thenCompose(
                        reply ->
                            (reply instanceof WorkItem.Accepted accepted
                                    ? runs.attemptEnded(id, accepted.item(), run.scopeId())
                                    : CompletableFuture.<Void>completedFuture(null))
                                .thenApply(told -> ItemReplies.toResponse(reply))));
  }

  public CompletionStage<ApiResponse> get(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    return command(call, run -> items.get(id), id);
  }

  /** The journal a page at a time: an item's trail can be long (every rejection is in it). */
  public CompletionStage<ApiResponse> audit(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    for (String name : call.query().keySet()) {
      if (!name.equals("limit") && !name.equals("after")) {
        throw ApiError.unknownParameter(name);
      }
    }
    int limit = (int) ApiIds.longParam(call.query(), "limit", 1, MAX_AUDIT_PAGE, 200);
    long after = ApiIds.longParam(call.query(), "after", 0, Long.MAX_VALUE - 1, 0);
    return requireKnown(id)
        .thenCompose(run -> audit.page(id, after, limit))
        .thenApply(trail -> ApiResponse.ok(ApiViews.audit(mapper, id, trail, limit)));
  }

  static final int MAX_AUDIT_PAGE = 1000;

  public CompletionStage<ApiResponse> retry(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    noBody(call);
    return command(call, run -> items.retry(id), id);
  }

  public CompletionStage<ApiResponse> claim(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    JsonBody body =
        JsonBody.parse(mapper, call.body(), Set.of("workerId", "leaseMillis", "requestId"));
    String workerId = worker(body);
    Duration lease = body.requireLease("leaseMillis", maxLease);
    String requestId = requestId(body);
    return requireKnown(id)
        .thenCompose(
            run ->
                items
                    .claim(id, workerId, lease, run.maxAttempts(), requestId)
                    .thenCompose(
                        reply ->
                            // a claim that found the item settled: counted, as a claim-next's is
                            runs.claimAnswered(id, reply, run.scopeId())
                                .thenApply(told -> ItemReplies.toResponse(reply))));
  }

  public CompletionStage<ApiResponse> renew(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("workerId", "token", "leaseMillis"));
    String workerId = worker(body);
    long token = token(body);
    Duration lease = body.requireLease("leaseMillis", maxLease);
    return command(call, run -> items.renew(id, workerId, token, lease), id);
  }

  public CompletionStage<ApiResponse> effect(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("workerId", "token", "outcome"));
    String workerId = worker(body);
    long token = token(body);
    WorkItem.EffectOutcome outcome = outcome(body.requireObject("outcome"));
    return command(call, run -> items.recordEffect(id, workerId, token, outcome), id);
  }

  /** An outcome object as the caller sent it, checked field by field. */
  public WorkItem.EffectOutcome outcome(JsonNode node) {
    JsonBody outcome;
    try {
      outcome =
          JsonBody.parse(
              mapper,
              mapper.writeValueAsBytes(node),
              Set.of("kind", "providerReference", "detail"));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw ApiError.badRequest("outcome", "outcome could not be read");
    } catch (ApiError e) {
      throw new ApiError(
          e.status(), e.code(), "outcome: " + e.getMessage(), Map.of("field", "outcome"));
    }
    String kind;
    String reference;
    String detail;
    try {
      kind = outcome.requireString("kind", 32);
      reference = outcome.optionalString("providerReference", 500).orElse(null);
      detail = outcome.optionalString("detail", 1000).orElse(null);
    } catch (ApiError e) {
      // named as the caller wrote it, inside the outcome, like an unknown kind
      Object field = e.body().get("field");
      throw new ApiError(
          e.status(),
          e.code(),
          "outcome." + e.getMessage(),
          Map.of("field", "outcome." + (field == null ? "" : field)));
    }
    WorkItem.OutcomeKind parsed;
    try {
      parsed = WorkItem.OutcomeKind.valueOf(kind.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw ApiError.badRequest(
          "outcome.kind", "outcome.kind must be APPLIED, FOUND_BY_LOOKUP or NOTHING_TO_DO");
    }
    return new WorkItem.EffectOutcome(parsed, reference, detail);
  }

  public CompletionStage<ApiResponse> ambiguous(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("workerId", "token", "reason"));
    String workerId = worker(body);
    long token = token(body);
    String reason = body.requireString("reason", 1000);
    return command(call, run -> items.markAmbiguous(id, workerId, token, reason), id);
  }

  /**
   * DONE. With an {@code outcome}, the effect is recorded and the item completed in one journal
   * event (the worker's last step, as a node's own workers take it); without one, an effect must be
   * recorded already. Either, repeated by the lease that completed the item, answers the same.
   */
  public CompletionStage<ApiResponse> complete(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("workerId", "token", "outcome"));
    String workerId = worker(body);
    long token = token(body);
    if (body.has("outcome")) {
      WorkItem.EffectOutcome outcome = outcome(body.requireObject("outcome"));
      return ending(
          call, run -> items.recordEffectAndComplete(id, workerId, token, outcome, 0), id);
    }
    return ending(call, run -> items.complete(id, workerId, token), id);
  }

  public CompletionStage<ApiResponse> fail(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    JsonBody body =
        JsonBody.parse(
            mapper,
            call.body(),
            Set.of("workerId", "token", "error", "retryable", "retryAfterMillis"));
    String workerId = worker(body);
    long token = token(body);
    String error = body.requireString("error", 1000);
    boolean retryable = body.optionalBoolean("retryable", true);
    Duration retryAfter =
        body.optionalLong("retryAfterMillis", 0, Duration.ofDays(1).toMillis())
            .map(Duration::ofMillis)
            .orElse(null);
    return ending(
        call, run -> items.fail(id, workerId, token, error, retryable, retryAfter, 0), id);
  }

  public CompletionStage<ApiResponse> release(ApiCall call) {
    ItemId id = ApiIds.itemId(call.param(0));
    JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("workerId", "token"));
    String workerId = worker(body);
    long token = token(body);
    return ending(call, run -> items.release(id, workerId, token), id);
  }

  /**
   * The worker that holds the lease: a command counts only from it. It is journaled and shown as it
   * is, so it must be printable. Every lease command is the worker's word: it is alive, which an
   * item that counts its lost holders asks about (docs/design.md, "Lost holders count").
   */
  String worker(JsonBody body) {
    String workerId = requireWorker(body);
    words.heard(workerId);
    return workerId;
  }

  /** The {@code workerId} of a lease command's body, checked: printable, 1-200 characters. */
  public static String requireWorker(JsonBody body) {
    return body.requirePrintable("workerId", 200);
  }

  /** A claim's optional {@code requestId}: {@link RequestId#RULE}, else 400 naming the field. */
  public static String requestId(JsonBody body) {
    String requestId = body.optionalString("requestId", 64).orElse(null);
    if (requestId != null && !RequestId.valid(requestId)) {
      throw ApiError.badRequest("requestId", "requestId must be " + RequestId.RULE);
    }
    return requestId;
  }

  private long token(JsonBody body) {
    return body.requireLong("token", 0, Long.MAX_VALUE);
  }

  private void noBody(ApiCall call) {
    if (call.body().length > 0) {
      JsonBody.parse(mapper, call.body(), Set.of());
    }
  }
}

package io.fencekeeper.api.http;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * Finds the {@link ApiEndpoint} of a request and its handler. The table of endpoints is the one
 * source of routes (the OpenAPI test holds it against {@code openapi.yaml}), so a path that is not
 * in it is 404 and a method that is not is 405 naming the ones that are.
 */
public final class ApiRouter {

  /** A handler of one endpoint; it may refuse by throwing {@link ApiError}. */
  public interface Handler extends Function<ApiCall, CompletionStage<ApiResponse>> {}

  /** The endpoint a request matched and its percent-decoded path parameters. */
  public record Match(ApiEndpoint endpoint, List<String> params) {}

  private final Map<ApiEndpoint, Handler> handlers;

  public ApiRouter(Map<ApiEndpoint, Handler> handlers) {
    this.handlers = new EnumMap<>(handlers);
    for (ApiEndpoint endpoint : ApiEndpoint.values()) {
      if (!this.handlers.containsKey(endpoint)) {
        throw new IllegalStateException("no handler for " + endpoint);
      }
    }
  }

  public Match match(HttpRequest request) {
    List<String> segments = new ArrayList<>();
    request.getUri().pathSegments().forEach(segments::add);
    String method = request.method().name();
    List<String> allowed = new ArrayList<>();
    for (ApiEndpoint candidate : ApiEndpoint.values()) {
      List<String> params = candidate.match(segments);
      if (params == null) {
        continue;
      }
      if (candidate.method().equals(method)) {
        return new Match(candidate, params);
      }
      allowed.add(candidate.method());
    }
    if (allowed.isEmpty()) {
      throw new ApiError(
          404, "not_found", "no such endpoint; GET /api/openapi.yaml lists them all");
    }
    throw new ApiError(
        405,
        "method_not_allowed",
        method + " is not allowed here; use " + allowed,
        Map.of("allow", allowed));
  }

  public Handler handler(ApiEndpoint endpoint) {
    return handlers.get(endpoint);
  }

  /** The query string, each parameter at most once. */
  public static Map<String, String> query(HttpRequest request) {
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
                ApiError.nameOf(name),
                "query parameter " + ApiError.quotedName(name) + " is given more than once");
          }
          single.put(name, values.get(0));
        });
    return single;
  }
}

package io.fencekeeper.api.http;

import java.util.List;

/**
 * The one table of the HTTP surface: the router dispatches on it and the OpenAPI test compares it
 * with {@code openapi.yaml}, so a route cannot exist without being described, nor the other way
 * round. {@code {name}} marks a path parameter: exactly one percent-decoded segment.
 */
public enum ApiEndpoint {
  CREATE_RUN("POST", "/api/runs", true),
  LIST_RUNS("GET", "/api/runs", false),
  GET_RUN("GET", "/api/runs/{runId}", false),
  RESUME_RUN("POST", "/api/runs/{runId}/resume", true),
  CANCEL_RUN("POST", "/api/runs/{runId}/cancel", true),
  LIST_RUN_ITEMS("GET", "/api/runs/{runId}/items", false),
  CLAIM_NEXT("POST", "/api/runs/{runId}/claim-next", true),
  GET_ITEM("GET", "/api/items/{itemId}", false),
  ITEM_AUDIT("GET", "/api/items/{itemId}/audit", false),
  RETRY_ITEM("POST", "/api/items/{itemId}/retry", true),
  CLAIM_ITEM("POST", "/api/items/{itemId}/claim", true),
  RENEW_ITEM("POST", "/api/items/{itemId}/renew", true),
  RECORD_EFFECT("POST", "/api/items/{itemId}/effect", true),
  MARK_AMBIGUOUS("POST", "/api/items/{itemId}/ambiguous", true),
  COMPLETE_ITEM("POST", "/api/items/{itemId}/complete", true),
  FAIL_ITEM("POST", "/api/items/{itemId}/fail", true),
  RELEASE_ITEM("POST", "/api/items/{itemId}/release", true),
  GET_GOVERNOR("GET", "/api/governor", false),
  PUT_GOVERNOR("PUT", "/api/governor", true),
  // the nodes the fleet wants (docs/cluster.md, "The fleet follows the window")
  GET_FLEET("GET", "/api/fleet", false),
  LIST_PROVIDERS("GET", "/api/providers", false),
  PUT_PROVIDER("PUT", "/api/providers/{name}", true),
  METRICS("GET", "/metrics", false),
  OPENAPI("GET", "/api/openapi.yaml", false),
  // the dashboard's live feeds and views ("/api/runs/events" would be read as a run id)
  RUN_LIST_EVENTS("GET", "/api/events/runs", false),
  RUN_EVENTS("GET", "/api/runs/{runId}/events", false),
  RUN_REPORT("GET", "/api/runs/{runId}/report", false),
  CLUSTER("GET", "/api/cluster", false),
  WHOAMI("GET", "/api/whoami", false),
  // verifying an ended run against its provider (docs/design.md, "Verifying a run")
  VERIFY_RUN("POST", "/api/runs/{runId}/verify", true),
  LIST_VERIFICATIONS("GET", "/api/runs/{runId}/verifications", false),
  GET_VERIFICATION("GET", "/api/runs/{runId}/verifications/{number}", false),
  VERIFICATION_FINDINGS("GET", "/api/runs/{runId}/verifications/{number}/findings", false),
  PRUNE_ARCHIVE("POST", "/api/archive/prune", true);

  private final String method;
  private final String path;
  private final boolean mutating;
  private final List<String> segments;

  ApiEndpoint(String method, String path, boolean mutating) {
    this.method = method;
    this.path = path;
    this.mutating = mutating;
    this.segments = List.of(path.substring(1).split("/"));
  }

  public String method() {
    return method;
  }

  public String path() {
    return path;
  }

  /** Mutating endpoints need the bearer token whenever one is configured. */
  public boolean mutating() {
    return mutating;
  }

  /**
   * The path parameters when {@code decodedSegments} fit this endpoint's path, or null. The
   * segments are already percent-decoded, so {@code a%2Fb} arrives as the one segment {@code a/b}.
   */
  List<String> match(List<String> decodedSegments) {
    if (decodedSegments.size() != segments.size()) {
      return null;
    }
    List<String> params = new java.util.ArrayList<>(2);
    for (int i = 0; i < segments.size(); i++) {
      String template = segments.get(i);
      String actual = decodedSegments.get(i);
      if (template.startsWith("{")) {
        params.add(actual);
      } else if (!template.equals(actual)) {
        return null;
      }
    }
    return params;
  }
}

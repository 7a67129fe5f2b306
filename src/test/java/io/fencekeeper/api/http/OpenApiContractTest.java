package io.fencekeeper.api.http;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.fencekeeper.api.ApiTestNode;
import io.fencekeeper.api.ops.OpsEndpoints;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 51: openapi.yaml is the whole contract. Every operation of {@link ApiEndpoint} is called on
 * a real node (the in-JVM node and HTTP API the API tests use), for its answers and its refusals;
 * every answer's status must be declared for that operation, and a JSON body must validate against
 * the schema declared for that status (networknt's JSON Schema validator, with OpenAPI's {@code
 * nullable}). A JSON answer whose status declares no schema fails too.
 */
class OpenApiContractTest {

  private static final ApiTestNode api = ApiTestNode.get();
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final JsonNode DOC = read();
  private static final JsonSchemaFactory SCHEMAS =
      JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V4);
  private static final SchemaValidatorsConfig CONFIG =
      SchemaValidatorsConfig.builder()
          .nullableKeywordEnabled(true)
          .formatAssertionsEnabled(true)
          .build();

  private static final Set<ApiEndpoint> CALLED = EnumSet.noneOf(ApiEndpoint.class);
  private static final List<String> SEEN = new ArrayList<>();

  /** What did not fit, all of it (a failing run names every gap at once). */
  private static final List<String> PROBLEMS = new ArrayList<>();

  private static void problem(boolean holds, String what) {
    if (!holds) {
      PROBLEMS.add(what);
    }
  }

  private static JsonNode read() {
    try {
      return YAML.readTree(OpsEndpoints.openApiText());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Sends {@code method path} (JSON body or none) as {@code endpoint}, and checks the answer. */
  private static ApiTestNode.Answer call(
      ApiEndpoint endpoint, String path, String body, String token, String contentType) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(api.base + path));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    if (contentType != null) {
      request.header("Content-Type", contentType);
    }
    HttpRequest.BodyPublisher publisher =
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body);
    request.method(endpoint.method(), endpoint.method().equals("GET") ? noBody() : publisher);
    ApiTestNode.Answer answer = api.send(request, null);
    check(endpoint, answer.status(), answer.body(), answer.headers());
    return answer;
  }

  private static HttpRequest.BodyPublisher noBody() {
    return HttpRequest.BodyPublishers.noBody();
  }

  private static ApiTestNode.Answer as(ApiEndpoint endpoint, String path, String body) {
    return call(
        endpoint,
        path,
        body,
        ApiTestNode.TOKEN,
        endpoint.method().equals("GET") ? null : "application/json");
  }

  private static ApiTestNode.Answer expect(
      int status, ApiEndpoint endpoint, String path, String body) {
    ApiTestNode.Answer answer = as(endpoint, path, body);
    problem(
        status == answer.status(),
        endpoint
            + " "
            + path
            + " answered "
            + answer.status()
            + ", not "
            + status
            + ": "
            + answer.body());
    return answer;
  }

  /** The answer's status is declared for the operation, and its body fits the declared schema. */
  static void check(
      ApiEndpoint endpoint, int status, String body, java.net.http.HttpHeaders headers) {
    CALLED.add(endpoint);
    SEEN.add(endpoint + " " + status);
    JsonNode operation =
        DOC.path("paths").path(endpoint.path()).path(endpoint.method().toLowerCase(Locale.ROOT));
    assertTrue(operation.isObject(), endpoint + " is described");
    JsonNode response = resolve(operation.path("responses").path(String.valueOf(status)));
    if (response.isMissingNode()) {
      PROBLEMS.add(endpoint + " answered " + status + ", not declared: " + body);
      return;
    }
    String type = headers.firstValue("Content-Type").orElse("").split(";")[0].trim();
    if (status == 204) {
      problem(body.isEmpty(), endpoint + " 204 with a body: " + body);
      return;
    }
    if (!type.isEmpty() && !response.path("content").has(type)) {
      PROBLEMS.add(endpoint + " " + status + " answered " + type + ", not declared");
      return;
    }
    if (!type.equals("application/json")) {
      return;
    }
    JsonNode schema = response.path("content").path(type).path("schema");
    if (!schema.isObject()) {
      PROBLEMS.add(endpoint + " " + status + " answers JSON but declares no schema");
      return;
    }
    validate(endpoint + " " + status, schema, body);
  }

  private static JsonNode resolve(JsonNode node) {
    JsonNode at = node;
    while (at.has("$ref")) {
      String ref = at.path("$ref").asText();
      at = DOC.at(ref.substring(1));
    }
    return at;
  }

  private static void validate(String what, JsonNode schema, String body) {
    ObjectNode root = ((ObjectNode) schema).deepCopy();
    root.set("components", DOC.path("components"));
    JsonSchema validator = SCHEMAS.getSchema(root, CONFIG);
    JsonNode json;
    try {
      json = api.json.readTree(body);
    } catch (Exception e) {
      throw new AssertionError(what + " is not JSON: " + body, e);
    }
    Set<ValidationMessage> problems = validator.validate(json);
    problem(problems.isEmpty(), what + " does not fit its schema: " + problems + " in " + body);
  }

  /** A server-sent event stream: its status and content type, then the connection is closed. */
  private static void stream(ApiEndpoint endpoint, String path, int status) throws Exception {
    HttpResponse<InputStream> answer =
        api.http.send(
            HttpRequest.newBuilder(URI.create(api.base + path))
                .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    String body = "";
    try (InputStream in = answer.body()) {
      if (answer.statusCode() != 200) {
        body = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      }
    }
    problem(
        status == answer.statusCode(), endpoint + " answered " + answer.statusCode() + ": " + body);
    check(endpoint, answer.statusCode(), body, answer.headers());
  }

  private static String claim(String worker, String requestId) {
    return "{\"workerId\":\""
        + worker
        + "\",\"leaseMillis\":20000"
        + (requestId == null ? "" : ",\"requestId\":\"" + requestId + "\"")
        + "}";
  }

  private static String as(String worker, long token, String more) {
    return "{\"workerId\":\"" + worker + "\",\"token\":" + token + more + "}";
  }

  private static final String APPLIED =
      ",\"outcome\":{\"kind\":\"APPLIED\",\"providerReference\":\"eff-1\"}";

  @Test
  void everyRunAndOpsOperationAnswersAsDeclared() throws Exception {
    String job = ApiTestNode.newJob("contract");
    String create =
        ApiTestNode.createBody(
            job,
            "2026-11-29",
            "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"},"
                + "{\"accountId\":\"a-2\",\"cursor\":\"c-1\"}]}",
            "");
    expect(201, ApiEndpoint.CREATE_RUN, "/api/runs", create);
    expect(200, ApiEndpoint.CREATE_RUN, "/api/runs", create);
    expect(
        409,
        ApiEndpoint.CREATE_RUN,
        "/api/runs",
        create.replace("\"scope\"", "\"maxAttempts\":7,\"scope\""));
    expect(400, ApiEndpoint.CREATE_RUN, "/api/runs", "{\"job\":1}");
    expect(
        422,
        ApiEndpoint.CREATE_RUN,
        "/api/runs",
        create.replace(job, job + "-late").replace("2026-11-30T06:00:00Z", "2020-01-01T00:00:00Z"));
    String runId = job + "/2026-11-29";
    String run = "/api/runs/" + seg(runId);
    String unknownRun = "/api/runs/" + seg("nojob/2026-11-29");

    expect(200, ApiEndpoint.LIST_RUNS, "/api/runs?limit=5", null);
    expect(400, ApiEndpoint.LIST_RUNS, "/api/runs?limit=0", null);
    expect(200, ApiEndpoint.GET_RUN, run, null);
    expect(404, ApiEndpoint.GET_RUN, unknownRun, null);
    expect(400, ApiEndpoint.GET_RUN, "/api/runs/" + seg("no-date"), null);
    expect(409, ApiEndpoint.RESUME_RUN, run + "/resume", "{\"deadline\":\"2026-11-30T07:00:00Z\"}");
    expect(
        404,
        ApiEndpoint.RESUME_RUN,
        unknownRun + "/resume",
        "{\"deadline\":\"2026-11-30T07:00:00Z\"}");
    expect(422, ApiEndpoint.RESUME_RUN, run + "/resume", "{\"deadline\":\"2020-01-01T00:00:00Z\"}");
    expect(200, ApiEndpoint.LIST_RUN_ITEMS, run + "/items?limit=1", null);
    expect(400, ApiEndpoint.LIST_RUN_ITEMS, run + "/items?limit=999", null);
    expect(404, ApiEndpoint.LIST_RUN_ITEMS, unknownRun + "/items", null);
    expect(200, ApiEndpoint.RUN_REPORT, run + "/report", null);
    expect(200, ApiEndpoint.RUN_REPORT, run + "/report?format=jsonl", null);
    expect(404, ApiEndpoint.RUN_REPORT, unknownRun + "/report", null);
    expect(400, ApiEndpoint.RUN_REPORT, run + "/report?format=xml", null);
    expect(409, ApiEndpoint.VERIFY_RUN, run + "/verify", "{}");
    expect(404, ApiEndpoint.VERIFY_RUN, unknownRun + "/verify", "{}");
    expect(400, ApiEndpoint.VERIFY_RUN, run + "/verify", "{\"sample\":0}");
    expect(200, ApiEndpoint.LIST_VERIFICATIONS, run + "/verifications", null);
    expect(404, ApiEndpoint.LIST_VERIFICATIONS, unknownRun + "/verifications", null);
    expect(404, ApiEndpoint.GET_VERIFICATION, run + "/verifications/1", null);
    expect(400, ApiEndpoint.GET_VERIFICATION, run + "/verifications/x", null);
    expect(404, ApiEndpoint.VERIFICATION_FINDINGS, run + "/verifications/1/findings", null);
    stream(ApiEndpoint.RUN_EVENTS, run + "/events", 200);
    stream(ApiEndpoint.RUN_EVENTS, unknownRun + "/events", 404);
    stream(ApiEndpoint.RUN_LIST_EVENTS, "/api/events/runs", 200);

    JsonNode governor = expect(200, ApiEndpoint.GET_GOVERNOR, "/api/governor", null).tree();
    expect(
        200,
        ApiEndpoint.PUT_GOVERNOR,
        "/api/governor",
        "{\"normalCap\":"
            + governor.path("normalCap").asInt()
            + ",\"burstCap\":"
            + governor.path("burstCap").asInt()
            + ",\"minCap\":"
            + governor.path("minCap").asInt()
            + "}");
    expect(
        422,
        ApiEndpoint.PUT_GOVERNOR,
        "/api/governor",
        "{\"normalCap\":20,\"burstCap\":12,\"minCap\":2}");
    expect(200, ApiEndpoint.GET_FLEET, "/api/fleet", null);
    expect(200, ApiEndpoint.LIST_PROVIDERS, "/api/providers", null);
    expect(404, ApiEndpoint.PUT_PROVIDER, "/api/providers/nosuch", "{\"maxInFlight\":4}");
    expect(400, ApiEndpoint.PUT_PROVIDER, "/api/providers/default", "{\"maxInFlight\":\"x\"}");
    expect(200, ApiEndpoint.METRICS, "/metrics", null);
    expect(200, ApiEndpoint.OPENAPI, "/api/openapi.yaml", null);
    expect(200, ApiEndpoint.CLUSTER, "/api/cluster", null);
    expect(200, ApiEndpoint.WHOAMI, "/api/whoami", null);
    assertEquals(
        401, call(ApiEndpoint.WHOAMI, "/api/whoami", null, "not-the-token", null).status());
    expect(
        200,
        ApiEndpoint.PRUNE_ARCHIVE,
        "/api/archive/prune",
        "{\"endedBefore\":\"2000-01-01\",\"dryRun\":true}");
    expect(400, ApiEndpoint.PRUNE_ARCHIVE, "/api/archive/prune", "{\"endedBefore\":\"soon\"}");

    // refusals every operation may meet: no token, the wrong content type
    for (ApiEndpoint endpoint : ApiEndpoint.values()) {
      if (endpoint == ApiEndpoint.METRICS) {
        continue; // the one call this machine may make without a token
      }
      String path =
          endpoint
              .path()
              .replace("{runId}", seg(runId))
              .replace("{itemId}", seg(runId + "/a-1/c-1"))
              .replace("{name}", "default")
              .replace("{number}", "1");
      problem(
          call(endpoint, path, null, null, null).status() == 401, endpoint + " without a token");
      if (!endpoint.method().equals("GET")) {
        problem(
            call(endpoint, path, "{}", ApiTestNode.TOKEN, "text/plain").status() == 415,
            endpoint + " as text/plain");
      }
    }

    expect(200, ApiEndpoint.CANCEL_RUN, run + "/cancel", null);
    expect(404, ApiEndpoint.CANCEL_RUN, unknownRun + "/cancel", null);
    assertEquals(List.of(), PROBLEMS, "answers that do not fit openapi.yaml");
  }

  @Test
  void everyLeaseOperationAnswersAndRefusesAsDeclared() {
    String runId = api.createRun(ApiTestNode.newJob("contract-lease"), 4);
    String run = "/api/runs/" + seg(runId);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    String unknownItem = "/api/items/" + seg(runId + "/nobody/c-1");

    expect(200, ApiEndpoint.GET_ITEM, item, null);
    expect(404, ApiEndpoint.GET_ITEM, unknownItem, null);
    expect(400, ApiEndpoint.GET_ITEM, "/api/items/x", null);
    expect(422, ApiEndpoint.RETRY_ITEM, item + "/retry", null);
    expect(404, ApiEndpoint.RETRY_ITEM, unknownItem + "/retry", null);

    long token =
        expect(200, ApiEndpoint.CLAIM_ITEM, item + "/claim", claim("w-1", "r-1"))
            .tree()
            .path("token")
            .asLong();
    expect(200, ApiEndpoint.CLAIM_ITEM, item + "/claim", claim("w-1", "r-1"));
    expect(409, ApiEndpoint.CLAIM_ITEM, item + "/claim", claim("w-2", null));
    expect(
        400,
        ApiEndpoint.CLAIM_ITEM,
        item + "/claim",
        "{\"workerId\":\"w-1\",\"leaseMillis\":3600001}");
    expect(404, ApiEndpoint.CLAIM_ITEM, unknownItem + "/claim", claim("w-1", null));
    expect(
        200, ApiEndpoint.RENEW_ITEM, item + "/renew", as("w-1", token, ",\"leaseMillis\":20000"));
    expect(
        409, ApiEndpoint.RENEW_ITEM, item + "/renew", as("w-2", token, ",\"leaseMillis\":20000"));
    expect(400, ApiEndpoint.RENEW_ITEM, item + "/renew", as("w-1", token, ""));
    expect(
        200,
        ApiEndpoint.MARK_AMBIGUOUS,
        item + "/ambiguous",
        as("w-1", token, ",\"reason\":\"timeout\""));
    expect(
        409,
        ApiEndpoint.MARK_AMBIGUOUS,
        item + "/ambiguous",
        as("w-1", token + 9, ",\"reason\":\"x\""));
    expect(422, ApiEndpoint.COMPLETE_ITEM, item + "/complete", as("w-1", token, ""));
    expect(200, ApiEndpoint.RECORD_EFFECT, item + "/effect", as("w-1", token, APPLIED));
    expect(409, ApiEndpoint.RECORD_EFFECT, item + "/effect", as("w-1", token, APPLIED));
    expect(
        400,
        ApiEndpoint.RECORD_EFFECT,
        item + "/effect",
        as("w-1", token, ",\"outcome\":{\"kind\":\"MAYBE\"}"));
    expect(200, ApiEndpoint.COMPLETE_ITEM, item + "/complete", as("w-1", token, ""));
    expect(200, ApiEndpoint.COMPLETE_ITEM, item + "/complete", as("w-1", token, ""));
    expect(409, ApiEndpoint.COMPLETE_ITEM, item + "/complete", as("w-2", token, APPLIED));
    expect(200, ApiEndpoint.ITEM_AUDIT, item + "/audit", null);
    expect(404, ApiEndpoint.ITEM_AUDIT, unknownItem + "/audit", null);

    String second = "/api/items/" + seg(ApiTestNode.itemId(runId, 2));
    long t2 =
        expect(200, ApiEndpoint.CLAIM_ITEM, second + "/claim", claim("w-1", null))
            .tree()
            .path("token")
            .asLong();
    expect(409, ApiEndpoint.FAIL_ITEM, second + "/fail", as("w-2", t2, ",\"error\":\"x\""));
    expect(
        400,
        ApiEndpoint.FAIL_ITEM,
        second + "/fail",
        as("w-1", t2, ",\"error\":\"x\",\"retryAfterMillis\":-1"));
    expect(
        200,
        ApiEndpoint.FAIL_ITEM,
        second + "/fail",
        as("w-1", t2, ",\"error\":\"x\",\"retryable\":false"));
    expect(409, ApiEndpoint.CLAIM_ITEM, second + "/claim", claim("w-1", null));
    expect(200, ApiEndpoint.RETRY_ITEM, second + "/retry", null);
    long t3 =
        expect(200, ApiEndpoint.CLAIM_ITEM, second + "/claim", claim("w-1", null))
            .tree()
            .path("token")
            .asLong();
    expect(409, ApiEndpoint.RELEASE_ITEM, second + "/release", as("w-2", t3, ""));
    expect(200, ApiEndpoint.RELEASE_ITEM, second + "/release", as("w-1", t3, ""));
    expect(400, ApiEndpoint.RELEASE_ITEM, second + "/release", "{\"workerId\":\"w-1\"}");

    String next = run + "/claim-next";
    ApiTestNode.Answer granted =
        ApiTestNode.await(
            () -> as(ApiEndpoint.CLAIM_NEXT, next, claim("w-3", "n-1")),
            a -> a.status() == 200,
            Duration.ofSeconds(20),
            "a claim-next");
    assertEquals(200, granted.status());
    expect(400, ApiEndpoint.CLAIM_NEXT, next, "{\"workerId\":\"w-3\"}");
    expect(
        404,
        ApiEndpoint.CLAIM_NEXT,
        "/api/runs/" + seg("nojob/2026-11-29") + "/claim-next",
        claim("w-3", null));
    ApiTestNode.await(
        () -> as(ApiEndpoint.CLAIM_NEXT, next, claim("w-3", null)),
        a -> a.status() == 429,
        Duration.ofSeconds(20),
        "nothing ready once every item is leased or done");
    expect(200, ApiEndpoint.CANCEL_RUN, run + "/cancel", null);
    ApiTestNode.await(
        () -> as(ApiEndpoint.CLAIM_NEXT, next, claim("w-3", null)),
        a -> a.status() == 409,
        Duration.ofSeconds(30),
        "run_cancelled");
    assertEquals(List.of(), PROBLEMS, "answers that do not fit openapi.yaml");
    assertEquals(List.of(), PROBLEMS, "answers that do not fit openapi.yaml");
  }

  @AfterAll
  static void everyOperationWasCalled() {
    Set<ApiEndpoint> missing = EnumSet.allOf(ApiEndpoint.class);
    missing.removeAll(CALLED);
    assertEquals(Set.of(), missing, "operations no test called; seen: " + new TreeSet<>(SEEN));
  }
}

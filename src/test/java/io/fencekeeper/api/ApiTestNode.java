package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * One real node for the API tests of this JVM: H2 journal on disk, cluster of one, no workers (so
 * only the tests claim items), a manual clock, and the HTTP API bound to a free loopback port with
 * a bearer token. Every test makes runs of its own job, so tests do not see each other's items.
 */
public final class ApiTestNode implements AutoCloseable {

  public static final String TOKEN = "test-token-0123456789abcdef";
  public static final ManualClock CLOCK = ManualClock.at("2026-11-29T23:00:00Z");
  static final String DEADLINE = "2026-11-30T06:00:00Z";
  private static final AtomicInteger JOBS = new AtomicInteger();

  private static ApiTestNode shared;

  public final FencekeeperNode node;
  public final int port;
  final ApiMetrics metrics = new ApiMetrics();
  public final String base;
  public final HttpClient http =
      HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5))
          .version(HttpClient.Version.HTTP_1_1)
          .build();
  public final ObjectMapper json = ApiJson.mapper();

  private ApiTestNode() throws Exception {
    this(java.util.Map.of());
  }

  private ApiTestNode(java.util.Map<String, Object> configOverrides) throws Exception {
    this(configOverrides, TOKEN);
  }

  private ApiTestNode(java.util.Map<String, Object> configOverrides, String token)
      throws Exception {
    Path dir = Files.createTempDirectory("fk-api");
    java.util.Map<String, Object> overrides = TestNodes.overrides(TestDatabases.h2File(dir), dir);
    overrides.putAll(configOverrides);
    node =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .clock(CLOCK)
            .workers(0)
            .start()
            .awaitUp(Duration.ofSeconds(60));
    ApiSettings settings = ApiSettings.from(node.settings()).withPort(0).withToken(token);
    var binding =
        HttpApi.start(node, settings, metrics).toCompletableFuture().get(30, TimeUnit.SECONDS);
    port = binding.localAddress().getPort();
    base = "http://127.0.0.1:" + port;
  }

  /** A node of its own, for tests that would disturb the shared one; the caller closes it. */
  public static ApiTestNode fresh() {
    try {
      return new ApiTestNode();
    } catch (Exception e) {
      throw new IllegalStateException("API test node did not start", e);
    }
  }

  /** A node of its own on loopback without any token, as the embedded default runs. */
  static ApiTestNode freshWithoutToken() {
    try {
      return new ApiTestNode(java.util.Map.of(), "");
    } catch (Exception e) {
      throw new IllegalStateException("API test node did not start", e);
    }
  }

  /**
   * Sends {@code request} (a whole HTTP/1.1 request, CRLF line ends) on a socket of its own and
   * returns the raw answer: for what a well-behaved HTTP client would refuse to send (an illegal
   * path, a foreign Host header).
   */
  String raw(String request) {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
      socket.getOutputStream().flush();
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * {@code POST path} with {@code body} as these exact bytes on a socket of its own, with the API
   * token and a JSON content type; the raw answer.
   */
  String rawPost(String path, byte[] body) {
    String head =
        "POST "
            + path
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + TOKEN
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().write(body);
      socket.getOutputStream().flush();
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A node of its own with configuration overrides; the caller closes it. */
  public static ApiTestNode fresh(java.util.Map<String, Object> configOverrides) {
    try {
      return new ApiTestNode(configOverrides);
    } catch (Exception e) {
      throw new IllegalStateException("API test node did not start", e);
    }
  }

  public static synchronized ApiTestNode get() {
    if (shared == null) {
      try {
        shared = new ApiTestNode();
      } catch (Exception e) {
        throw new IllegalStateException("API test node did not start", e);
      }
      Runtime.getRuntime().addShutdownHook(new Thread(shared.node::close));
    }
    return shared;
  }

  public static String newJob(String prefix) {
    return prefix + "-" + JOBS.incrementAndGet();
  }

  /** Percent-encodes an id as one path segment. */
  public static String seg(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  public record Answer(
      int status, String body, java.net.http.HttpHeaders headers, ObjectMapper json) {
    public JsonNode tree() {
      try {
        return json.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException("not JSON: " + body, e);
      }
    }

    public String error() {
      return tree().path("error").asText();
    }

    /** A body read off a raw socket, as JSON. */
    static JsonNode parse(ObjectMapper json, String body) {
      try {
        return json.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException("not JSON: " + body, e);
      }
    }
  }

  /** A read with the API token: with a token set, reads need one too. */
  public Answer get(String path) {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Authorization", "Bearer " + TOKEN)
            .GET(),
        null);
  }

  /** A read as a caller without a token (or with {@code token} as its bearer token). */
  public Answer getAs(String path, String token) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).GET();
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return send(request, null);
  }

  public Answer post(String path, String body) {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer " + TOKEN)
            .POST(
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body)),
        null);
  }

  /** POST /api/runs with a text/csv body and the run parameters as query parameters. */
  Answer upload(String query, HttpRequest.BodyPublisher csv, boolean withToken) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + "/api/runs?" + query))
            .header("Content-Type", "text/csv")
            .POST(csv);
    if (withToken) {
      request.header("Authorization", "Bearer " + TOKEN);
    }
    return send(request, null);
  }

  public Answer send(HttpRequest.Builder request, String ignored) {
    return exchange(http, request, json);
  }

  /**
   * Sends {@code request} with {@code http} and reads the answer as {@code json}: for a test that
   * talks to a node this class did not start.
   */
  public static Answer exchange(HttpClient http, HttpRequest.Builder request, ObjectMapper json) {
    try {
      HttpResponse<String> response =
          http.send(
              // a bound on a failure, not on the test: a staged upload took over 30 s at load 28
              request.timeout(Duration.ofSeconds(120)).build(),
              HttpResponse.BodyHandlers.ofString());
      return new Answer(response.statusCode(), response.body(), response.headers(), json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Creates a run of {@code accounts} accounts (a-1/c-1 ...) and returns its run id. */
  public String createRun(String job, int accounts) {
    return createRun(job, accounts, 10);
  }

  /** As {@link #createRun(String, int)}, allowing {@code maxFailedItems} items to fail. */
  public String createRun(String job, int accounts, int maxFailedItems) {
    StringBuilder list = new StringBuilder();
    for (int i = 1; i <= accounts; i++) {
      list.append(i > 1 ? "," : "")
          .append("{\"accountId\":\"a-")
          .append(i)
          .append("\",\"cursor\":\"c-1\"}");
    }
    Answer created =
        post(
            "/api/runs",
            createBody(
                job,
                "{\"type\":\"inline\",\"accounts\":[" + list + "]}",
                ",\"maxAttempts\":5,\"maxFailedItems\":" + maxFailedItems));
    if (created.status() != 201) {
      fail("run was not created: " + created.status() + " " + created.body());
    }
    return job + "/2026-11-29";
  }

  /** A create request for {@code job} on 2026-11-29 with {@code scope} (JSON) as it is. */
  static String createBody(String job, String scope) {
    return createBody(job, scope, "");
  }

  private static String createBody(String job, String scope, String more) {
    return createBody(job, "2026-11-29", scope, more);
  }

  /**
   * A create request for {@code job} on {@code businessDate} with {@code scope} (JSON) as it is and
   * {@code more} fields (each with its leading comma) as they are.
   */
  public static String createBody(String job, String businessDate, String scope, String more) {
    return "{\"job\":\""
        + job
        + "\",\"businessDate\":\""
        + businessDate
        + "\",\"deadline\":\""
        + DEADLINE
        + "\""
        + more
        + ",\"scope\":"
        + scope
        + "}";
  }

  /** Claims {@code item} (its path) for {@code worker} with a 10-minute lease; the token. */
  long claim(String item, String worker) {
    Answer claimed =
        post(item + "/claim", "{\"workerId\":\"" + worker + "\",\"leaseMillis\":600000}");
    if (claimed.status() != 200) {
      fail("not claimed: " + claimed.status() + " " + claimed.body());
    }
    return claimed.tree().path("token").asLong();
  }

  public static String itemId(String runId, int account) {
    return runId + "/a-" + account + "/c-1";
  }

  /** Waits for a condition with a deadline instead of sleeping. */
  public static <T> T await(Supplier<T> probe, Predicate<T> done, Duration timeout, String what) {
    Instant until = Instant.now().plus(timeout);
    T last = probe.get();
    while (!done.test(last)) {
      if (Instant.now().isAfter(until)) {
        fail("timed out waiting for " + what + "; last: " + last);
      }
      Thread.onSpinWait();
      last = probe.get();
    }
    return last;
  }

  @Override
  public void close() {
    node.close();
  }
}

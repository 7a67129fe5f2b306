package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.HttpApi;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.OffsetClock;
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
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One real node for the retention tests: a fresh PostgreSQL journal, workers, a clock that runs
 * from {@code start} with real time and jumps when the test says so (the one the coordinator, the
 * items, the dispatchers and the retention keeper read: a month passes at once, while a retry's
 * back-off still ends), the HTTP API with a token, and retention's archive directory in a temporary
 * folder.
 */
final class RetentionTestNode implements AutoCloseable {

  static final String TOKEN = "retention-token-0123456789abcdef";

  final OffsetClock clock = new OffsetClock();
  final TestDatabases.Target db;
  final Path dir;
  final Path archiveDir;
  final FencekeeperNode node;
  final ApiMetrics metrics = new ApiMetrics();
  final String base;
  final ObjectMapper json = ApiJson.mapper();
  private final HttpClient http =
      HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5))
          .version(HttpClient.Version.HTTP_1_1)
          .build();

  /**
   * {@code retention}: settings under {@code fencekeeper.retention} ({@code check-interval} is 200
   * ms unless given); {@code provider}: the default provider (null: the bundled sim).
   */
  RetentionTestNode(Instant start, Map<String, Object> retention, Provider provider, int workers)
      throws Exception {
    clock.jump(Duration.between(Instant.now(), start));
    db = TestDatabases.freshPostgres();
    dir = Files.createTempDirectory("fk-retention");
    archiveDir = dir.resolve("archive");
    Map<String, Object> overrides = TestNodes.overrides(db, dir);
    overrides.put("fencekeeper.retention.archive-dir", archiveDir.toString());
    overrides.put("fencekeeper.retention.check-interval", "200ms");
    retention.forEach((key, value) -> overrides.put("fencekeeper.retention." + key, value));
    FencekeeperNode.Builder builder =
        FencekeeperNode.builder(FencekeeperNode.config(overrides)).clock(clock).workers(workers);
    if (provider != null) {
      builder.provider(provider);
    }
    node = builder.start().awaitUp(Duration.ofSeconds(60));
    ApiSettings settings = ApiSettings.from(node.settings()).withPort(0).withToken(TOKEN);
    var binding =
        HttpApi.start(node, settings, metrics).toCompletableFuture().get(30, TimeUnit.SECONDS);
    base = "http://127.0.0.1:" + binding.localAddress().getPort();
  }

  record Answer(int status, String body, ObjectMapper json) {
    JsonNode tree() {
      try {
        return json.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException("not JSON: " + body, e);
      }
    }
  }

  static String seg(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  Answer get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  Answer post(String path, String body) {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  private Answer send(HttpRequest.Builder request) {
    try {
      HttpResponse<String> response =
          http.send(
              request
                  .header("Authorization", "Bearer " + TOKEN)
                  .timeout(Duration.ofSeconds(30))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return new Answer(response.statusCode(), response.body(), json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Creates the run of {@code job} for {@code date} over {@code accounts}, deadline in 6 h. */
  String createRun(String job, String date, List<String> accounts) {
    List<Map<String, String>> scope = new ArrayList<>();
    accounts.forEach(a -> scope.add(Map.of("accountId", a, "cursor", "c-1")));
    Map<String, Object> request =
        Map.of(
            "job",
            job,
            "businessDate",
            date,
            "deadline",
            clock.instant().plus(Duration.ofHours(6)).toString(),
            "maxAttempts",
            3,
            "maxFailedItems",
            10,
            "scope",
            Map.of("type", "inline", "accounts", scope));
    try {
      Answer created = post("/api/runs", json.writeValueAsString(request));
      // 202 is a create whose staging outlasted the request (a loaded machine: a CI run saw it);
      // the run goes on staging and every caller waits for it to end
      assertTrue(created.status() == 201 || created.status() == 202, created.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return job + "/" + date;
  }

  static List<String> accounts(String prefix, int n) {
    List<String> accounts = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      accounts.add(prefix + "-" + i);
    }
    return accounts;
  }

  JsonNode run(String runId) {
    Answer answer = get("/api/runs/" + seg(runId));
    assertEquals(200, answer.status(), answer.body());
    return answer.tree();
  }

  /** Waits until the run has ended; returns its view. */
  JsonNode awaitEnded(String runId) {
    return Await.until(
        Duration.ofSeconds(90),
        runId + " ended",
        () -> run(runId),
        run -> !run.path("state").asText().equals("RUNNING"));
  }

  /** Waits until retention has deleted every row of the run; returns its view. */
  JsonNode awaitPruned(String runId) {
    return Await.until(
        Duration.ofSeconds(90),
        runId + " pruned",
        () -> run(runId),
        run ->
            !run.path("archive").path("prunedAt").isMissingNode()
                && !run.path("archive").path("prunedAt").isNull());
  }

  /** Rows of the journal tables and run_item that belong to the items of {@code runId}. */
  long rowsOf(String runId, String scopeId) throws Exception {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password())) {
      long rows = 0;
      for (String sql :
          List.of(
              "SELECT count(*) FROM event_journal WHERE persistence_id LIKE ?",
              "SELECT count(*) FROM snapshot WHERE persistence_id LIKE ?",
              "SELECT count(*) FROM event_tag t JOIN event_journal j ON j.ordering = t.event_id"
                  + " WHERE j.persistence_id LIKE ?")) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setString(1, "WorkItem|" + runId + "/%");
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            rows += rs.getLong(1);
          }
        }
      }
      try (PreparedStatement ps =
          c.prepareStatement("SELECT count(*) FROM run_item WHERE scope_id = ?")) {
        ps.setString(1, scopeId);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          rows += rs.getLong(1);
        }
      }
      return rows;
    }
  }

  /** The run's scope id (the API does not show it), from its record. */
  String scopeIdOf(String runId) throws Exception {
    return node.endedRuns().find(runId).orElseThrow().record().scopeId();
  }

  @Override
  public void close() {
    node.close();
  }
}

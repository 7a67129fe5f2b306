package io.fencekeeper.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.HttpApi;
import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.node.NodeSettings;
import java.io.BufferedWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * Staging a scope, timed as a client sees it (issue 50): one node with its HTTP API on the bench's
 * database, and {@code rows} accounts created once on each intake path, from POST to RUNNING: a CSV
 * file in the node's scope directory, the same file uploaded as {@code text/csv}, and a SQL scope
 * (a table of the same accounts in the bench's database, read by a role that may only read it).
 * The paths run one after the other on the same node, so the later ones stage into a {@code
 * run_item} that already holds the earlier scopes, as a night after other nights does. No workers:
 * the runs stay RUNNING with their items PENDING.
 */
final class StagingBench {

  /** One intake path's figures. */
  record Result(
      String path,
      int rows,
      int createStatus,
      double answeredSeconds,
      double runningSeconds,
      double rowsPerSecond,
      long peakRssMiB,
      ResourceMeter.Measured resources) {}

  static final String SCOPE_ROLE = "fencekeeper_bench_scope";
  static final String SCOPE_TABLE = "bench_scope_accounts";

  private StagingBench() {}

  /**
   * Stages {@code rows} on each of {@code paths} in turn; with {@code warmup} above 0, each path
   * first stages that many rows untimed (classes loaded, pools grown), as a node that ran before.
   */
  static List<Result> run(
      BenchDatabase db,
      Path workDir,
      int rows,
      int warmup,
      List<String> paths,
      Map<String, String> overrides)
      throws Exception {
    if (!db.postgres()) {
      throw new IllegalArgumentException("--staging: PostgreSQL only (the SQL scope needs it)");
    }
    Path scopes = Files.createDirectories(workDir.resolve("scopes"));
    Path csv = scopes.resolve("accounts-" + rows + ".csv");
    writeCsv(csv, rows);
    Path small = scopes.resolve("warmup-" + warmup + ".csv");
    if (warmup > 0) {
      writeCsv(small, warmup);
    }
    String password = "bench-" + Long.toString(System.nanoTime(), 36);
    Map<String, Object> config =
        new HashMap<>(FencekeeperBench.nodeOverrides(db, workDir, overrides));
    config.put("fencekeeper.http.port", 0);
    config.put("fencekeeper.workers", 0);
    config.put("fencekeeper.scope-dir", scopes.toString());
    // without the URL's own user (the embedded server's carries one), which would win over the role
    config.put("fencekeeper.scope-sql.url", db.url().replaceFirst("\\?.*$", ""));
    config.put("fencekeeper.scope-sql.user", SCOPE_ROLE);
    config.put("fencekeeper.scope-sql.password", password);
    config.putAll(overrides);
    List<Result> results = new ArrayList<>();
    try (FencekeeperNode node =
        FencekeeperNode.builder(NodeConfig.load(Optional.empty(), config)).start()) {
      // the SQL scope's table comes after the node's migrations, which want an empty schema
      node.awaitUp(Duration.ofSeconds(60));
      ServerBinding binding =
          HttpApi.start(node, ApiSettings.from(NodeSettings.from(node.system().settings().config())))
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      URI base = URI.create("http://127.0.0.1:" + binding.localAddress().getPort());
      String tag = Long.toString(System.currentTimeMillis(), 36);
      if (warmup > 0) {
        sqlScope(db, warmup, password);
        for (String path : paths) {
          stage(db, base, path, "warmup-" + path + "-" + tag, warmup, small);
        }
      }
      sqlScope(db, rows, password);
      for (String path : paths) {
        results.add(stage(db, base, path, "staging-" + path + "-" + tag, rows, csv));
      }
      binding.unbind();
    }
    return results;
  }

  private static Result stage(
      BenchDatabase db, URI base, String path, String job, int rows, Path csv) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    Instant deadline = Instant.now().plus(Duration.ofHours(6));
    HttpRequest create =
        switch (path) {
          case "file" -> json(base, job, deadline, "{\"type\":\"csv\",\"path\":\"" + name(csv) + "\"}");
          case "upload" ->
              HttpRequest.newBuilder(
                      base.resolve(
                          "/api/runs?job="
                              + job
                              + "&businessDate="
                              + FencekeeperBench.BUSINESS_DATE
                              + "&deadline="
                              + URLEncoder.encode(deadline.toString(), StandardCharsets.UTF_8)))
                  .header("Content-Type", "text/csv")
                  .POST(HttpRequest.BodyPublishers.ofFile(csv))
                  .build();
          case "sql" ->
              json(
                  base,
                  job,
                  deadline,
                  "{\"type\":\"sql\",\"query\":\"select account_id, cursor from "
                      + SCOPE_TABLE
                      + " order by account_id\"}");
          default ->
              throw new IllegalArgumentException(
                  "--staging-paths: file, upload or sql, got " + path);
        };
    ObjectMapper mapper = new ObjectMapper();
    PeakRss rss = new PeakRss();
    try (ResourceMeter meter = ResourceMeter.start(db.server())) {
      rss.start();
      long started = System.nanoTime();
      HttpResponse<String> answer = client.send(create, HttpResponse.BodyHandlers.ofString());
      double answered = (System.nanoTime() - started) / 1e9;
      if (answer.statusCode() != 201 && answer.statusCode() != 202) {
        throw new IllegalStateException(path + ": " + answer.statusCode() + " " + answer.body());
      }
      URI run =
          base.resolve(
              "/api/runs/"
                  + URLEncoder.encode(
                      job + "/" + FencekeeperBench.BUSINESS_DATE, StandardCharsets.UTF_8));
      JsonNode view = mapper.readTree(answer.body());
      while (!view.path("state").asText().equals("RUNNING")) {
        if (!view.path("state").asText().equals("STAGING")) {
          throw new IllegalStateException(path + ": the run is " + view);
        }
        // a client that polls: each look costs the node a run view, so not too often
        Thread.sleep(200);
        view =
            mapper.readTree(
                client
                    .send(HttpRequest.newBuilder(run).build(), HttpResponse.BodyHandlers.ofString())
                    .body());
      }
      double running = (System.nanoTime() - started) / 1e9;
      long total = view.path("counts").path("total").asLong();
      if (total != rows) {
        throw new IllegalStateException(path + ": " + total + " items of " + rows);
      }
      ResourceMeter.Measured measured = meter.stop();
      return new Result(
          path,
          rows,
          answer.statusCode(),
          answered,
          running,
          rows / running,
          rss.stop() >> 20,
          measured);
    }
  }

  private static HttpRequest json(URI base, String job, Instant deadline, String scope) {
    String body =
        "{\"job\":\""
            + job
            + "\",\"businessDate\":\""
            + FencekeeperBench.BUSINESS_DATE
            + "\",\"deadline\":\""
            + deadline
            + "\",\"scope\":"
            + scope
            + "}";
    return HttpRequest.newBuilder(base.resolve("/api/runs"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  private static String name(Path csv) {
    return csv.getFileName().toString();
  }

  /** {@code acct-<i>,c-<i % 7>}, the accounts of every path. */
  private static void writeCsv(Path csv, int rows) throws Exception {
    try (BufferedWriter out = Files.newBufferedWriter(csv)) {
      out.write("accountId,cursor\n");
      for (int i = 0; i < rows; i++) {
        out.write("acct-" + i + ",c-" + (i % 7) + "\n");
      }
    }
  }

  /**
   * The SQL scope's table, the same accounts, and a role that may only read it (the node refuses a
   * superuser as a scope source), with {@code password}.
   */
  private static void sqlScope(BenchDatabase db, int rows, String password) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + SCOPE_TABLE);
      s.execute(
          "CREATE TABLE "
              + SCOPE_TABLE
              + " (account_id VARCHAR(128) PRIMARY KEY, cursor VARCHAR(128) NOT NULL)");
      s.execute(
          "INSERT INTO "
              + SCOPE_TABLE
              + " SELECT 'acct-' || i, 'c-' || (i % 7) FROM generate_series(0, "
              + (rows - 1)
              + ") i");
      s.execute(
          "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '"
              + SCOPE_ROLE
              + "') THEN CREATE ROLE "
              + SCOPE_ROLE
              + " LOGIN; END IF; END $$");
      s.execute("ALTER ROLE " + SCOPE_ROLE + " PASSWORD '" + password + "'");
      s.execute("GRANT SELECT ON " + SCOPE_TABLE + " TO " + SCOPE_ROLE);
      s.execute("ANALYZE " + SCOPE_TABLE);
    }
  }

  /** The peak resident set of this JVM (the node's) over a phase, sampled every 50 ms. */
  static final class PeakRss {
    private static final Pattern RSS = Pattern.compile("VmRSS:\\s+(\\d+) kB");
    private final AtomicLong peak = new AtomicLong();
    private volatile boolean sampling;
    private Thread sampler;

    void start() {
      sampling = true;
      sampler =
          new Thread(
              () -> {
                while (sampling) {
                  peak.accumulateAndGet(rssBytes(), Math::max);
                  try {
                    Thread.sleep(50);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "staging-bench-rss");
      sampler.setDaemon(true);
      sampler.start();
    }

    long stop() throws InterruptedException {
      sampling = false;
      sampler.join();
      return peak.accumulateAndGet(rssBytes(), Math::max);
    }

    private static long rssBytes() {
      try {
        Matcher m = RSS.matcher(Files.readString(Path.of("/proc/self/status")));
        return m.find() ? Long.parseLong(m.group(1)) * 1024 : 0;
      } catch (Exception e) {
        return 0;
      }
    }
  }
}

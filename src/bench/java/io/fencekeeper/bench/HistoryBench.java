package io.fencekeeper.bench;

import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.api.HttpApi;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.node.NodeSettings;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * History that stays bounded: one node with one ended run, then with {@code runs} ended runs; each
 * time its CPU while idle with a live feed open (the feed's one-second tick, the coordinator's
 * ticks, everything the node does periodically) and the latency of {@code GET /api/runs}. Both
 * should be the same within noise, whatever the history holds.
 */
final class HistoryBench {

  /** What one history size cost: CPU per second of idle, and the run list's latency. */
  record Result(int endedRuns, double idleCpuPercent, double listP50Millis, double listP99Millis) {}

  static final Duration IDLE = Duration.ofSeconds(30);
  static final int LIST_CALLS = 200;

  private HistoryBench() {}

  static List<Result> run(
      BenchDatabase db, Path workDir, int runs, Map<String, String> configOverrides)
      throws Exception {
    Map<String, Object> overrides =
        new HashMap<>(FencekeeperBench.nodeOverrides(db, workDir, configOverrides));
    overrides.put("fencekeeper.http.port", 0);
    overrides.put("fencekeeper.workers", 4);
    List<Result> results = new ArrayList<>();
    try (FencekeeperNode node =
        FencekeeperNode.builder(NodeConfig.load(Optional.empty(), overrides)).start()) {
      node.awaitUp(Duration.ofSeconds(60));
      ServerBinding binding =
          HttpApi.start(node, ApiSettings.from(NodeSettings.from(node.system().settings().config())))
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      URI base =
          URI.create(
              "http://127.0.0.1:" + binding.localAddress().getPort());
      HttpClient client = HttpClient.newHttpClient();
      createEnded(node, 0, 1);
      results.add(measure(client, base, 1));
      createEnded(node, 1, runs);
      results.add(measure(client, base, runs));
      binding.unbind();
    }
    return results;
  }

  /** Runs {@code from} to {@code to} - 1 of one item each, eight at a time, until each has ended. */
  private static void createEnded(FencekeeperNode node, int from, int to) throws Exception {
    LocalDate first = LocalDate.of(2020, 1, 1);
    for (int start = from; start < to; start += 8) {
      List<CompletableFuture<RunView>> batch = new ArrayList<>();
      for (int i = start; i < Math.min(to, start + 8); i++) {
        RunRequest request =
            new RunRequest(
                "history",
                first.plusDays(i),
                new Scope.Inline(List.of(new AccountCursor("acct-" + i, "c1"))),
                Instant.now().plus(Duration.ofHours(1)),
                3,
                0);
        batch.add(
            node.runs()
                .create(request)
                .toCompletableFuture()
                .thenApply(reply -> ((RunCoordinator.Created) reply).run()));
      }
      for (CompletableFuture<RunView> created : batch) {
        awaitEnded(node, created.get(60, TimeUnit.SECONDS).runId());
      }
    }
    // and filed: the coordinator holds none of them any more
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (!node.runs().active().toCompletableFuture().get(30, TimeUnit.SECONDS).isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the coordinator did not file the ended runs");
      }
      Thread.sleep(200);
    }
  }

  private static void awaitEnded(FencekeeperNode node, String runId) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (true) {
      RunView run =
          node.runs().get(runId).toCompletableFuture().get(30, TimeUnit.SECONDS).orElseThrow();
      if (run.state() != RunState.RUNNING && run.state() != RunState.STAGING) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("run " + runId + " did not end");
      }
      Thread.sleep(50);
    }
  }

  private static Result measure(HttpClient client, URI base, int ended) throws Exception {
    HttpRequest feed = HttpRequest.newBuilder(base.resolve("/api/events/runs")).build();
    HttpResponse<InputStream> stream = client.send(feed, HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream events = stream.body()) {
      var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
      long cpuBefore = os.getProcessCpuTime();
      long wallBefore = System.nanoTime();
      Thread.sleep(IDLE.toMillis());
      double cpuPercent =
          100.0 * (os.getProcessCpuTime() - cpuBefore) / (System.nanoTime() - wallBefore);
      double[] millis = new double[LIST_CALLS];
      HttpRequest list = HttpRequest.newBuilder(base.resolve("/api/runs")).build();
      for (int i = 0; i < LIST_CALLS; i++) {
        long start = System.nanoTime();
        HttpResponse<String> answer = client.send(list, HttpResponse.BodyHandlers.ofString());
        millis[i] = (System.nanoTime() - start) / 1e6;
        if (answer.statusCode() != 200) {
          throw new IllegalStateException("GET /api/runs answered " + answer.statusCode());
        }
      }
      Arrays.sort(millis);
      return new Result(
          ended, cpuPercent, millis[LIST_CALLS / 2], millis[(int) (LIST_CALLS * 0.99) - 1]);
    }
  }
}

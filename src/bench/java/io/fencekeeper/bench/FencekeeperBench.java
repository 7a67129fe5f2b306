package io.fencekeeper.bench;

import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.Scope;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * N items through one real node, end to end: the run is created from a CSV scope (staged in {@code
 * run_item}), the dispatcher hands items to the worker pool, and every item is claimed, its effect
 * recorded and completed, each journaled. Timed from the run's creation to its end, as the
 * coordinator saw them.
 */
final class FencekeeperBench {

  static final LocalDate BUSINESS_DATE = LocalDate.of(2026, 11, 29);

  /** Every account of a bench scope has this one cursor: {@code acct-<i>,c1}. */
  static final String CURSOR = "c1";

  record Result(
      String database,
      String job,
      int items,
      int workers,
      long done,
      String state,
      double stagingSeconds,
      double runSeconds,
      double itemsPerSecond,
      ResourceMeter.Measured resources,
      double journalEventsPerItem,
      double[] claimMillis,
      Map<String, Long> providerCalls,
      long createdAtMillis,
      long endedAtMillis,
      List<String> governorChanges,
      List<long[]> callsEachSecond) {

    /** Provider calls the workers made, failed ones included. */
    long totalProviderCalls() {
      return providerCalls.entrySet().stream()
          .filter(e -> !ProviderCallCounter.OUTCOMES.contains(e.getKey()))
          .mapToLong(Map.Entry::getValue)
          .sum();
    }

    /** Provider calls answered 429 (throttled). */
    long throttledProviderCalls() {
      return providerCalls.getOrDefault(ProviderCallCounter.THROTTLED, 0L);
    }
  }

  /**
   * The node under test: its worker pool, and its provider, either given ({@code provider}) or the
   * one its configuration describes ({@code provider} null, {@code fencekeeper.provider} in {@code
   * config}), as an operator would set it.
   *
   * @param sim the sim provider's process, metered beside the node when there is one
   * @param duringWarmup what holds while the warm-up runs (opened before it, closed after it), e.g.
   *     the sim at another latency
   * @param duringRun what holds while the timed run runs (opened when it is created, closed when it
   *     ended), e.g. the sim's rate limit dropping after some seconds
   */
  record Setup(
      int workers,
      Provider provider,
      Map<String, Object> config,
      ProcessCpu sim,
      Callable<AutoCloseable> duringWarmup,
      Callable<AutoCloseable> duringRun) {

    private static final Callable<AutoCloseable> NOTHING = () -> () -> {};

    Setup(
        int workers,
        Provider provider,
        Map<String, Object> config,
        ProcessCpu sim,
        Callable<AutoCloseable> duringWarmup) {
      this(workers, provider, config, sim, duringWarmup, NOTHING);
    }

    static Setup withProvider(int workers, Provider provider) {
      return new Setup(
          workers, provider, Map.of(), ProcessCpu.notMeasured("no sim process"), NOTHING);
    }

    /**
     * {@code FENCEKEEPER_PROVIDER=java} with {@link NoopPlugin} in a jar of its own under {@code
     * workDir}: the no-op provider through the plugin path, as an operator configures a plugin.
     */
    static Setup noopPlugin(int workers, Path workDir) throws java.io.IOException {
      Path path = NoopPlugin.jarIn(workDir.resolve("noop-plugin"));
      return new Setup(
          workers,
          null,
          Map.of(
              "fencekeeper.provider.kind",
              "java",
              "fencekeeper.provider.class",
              NoopPlugin.class.getName(),
              "fencekeeper.provider.path",
              path.toString()),
          ProcessCpu.notMeasured("no sim process"),
          NOTHING);
    }

    /** {@code FENCEKEEPER_PROVIDER=http}, {@code FENCEKEEPER_PROVIDER_URL} = the sim. */
    static Setup httpProvider(int workers, Sim sim) {
      return new Setup(
          workers,
          null,
          Map.of(
              "fencekeeper.provider.kind",
              "http",
              "fencekeeper.provider.url",
              sim.baseUrl().toString()),
          sim.cpu(),
          NOTHING);
    }

    /** The warm-up with the sim at {@code latencyMs}, the timed run at the sim's own. */
    Setup warmingAt(Sim sim, long latencyMs) {
      return new Setup(
          workers, provider, config, this.sim, () -> sim.latencyFor(latencyMs), duringRun);
    }

    /** The same, with {@code warmup} held during the warm-up and {@code run} during the run. */
    Setup holding(Callable<AutoCloseable> warmup, Callable<AutoCloseable> run) {
      return new Setup(workers, provider, config, sim, warmup, run);
    }
  }

  private FencekeeperBench() {}

  static Result run(
      BenchDatabase db,
      Path workDir,
      int items,
      int warmupItems,
      Setup setup,
      Map<String, String> configOverrides)
      throws Exception {
    Path scope = writeScope(workDir, "acct-", items);
    String job = "bench-" + Long.toString(System.currentTimeMillis(), 36);
    int workers = setup.workers();
    Map<String, Object> overrides = new HashMap<>();
    // the cap is the experiment's variable here: the governor is opened to the worker count, so it
    // never second-guesses it (--set fencekeeper.governor.* still overrides)
    overrides.put("fencekeeper.governor.normal-cap", workers);
    overrides.put("fencekeeper.governor.burst-cap", workers);
    overrides.put("fencekeeper.governor.min-cap", 1);
    overrides.putAll(setup.config());
    overrides.putAll(nodeOverrides(db, workDir, configOverrides));
    ClaimTimings[] timings = new ClaimTimings[1];
    ProviderCallCounter calls = new ProviderCallCounter();
    FencekeeperNode.Builder builder =
        FencekeeperNode.builder(NodeConfig.load(Optional.empty(), overrides))
            .workers(workers)
            .attemptListener(calls)
            .workerGateway(
                g -> timings[0] = new ClaimTimings(g, Math.min(items, 2_000_000) + 1024));
    if (setup.provider() != null) {
      builder.provider(setup.provider());
    }
    try (FencekeeperNode node = builder.start()) {
      node.awaitUp(Duration.ofSeconds(60));
      if (warmupItems > 0) {
        // JIT compilation, shard allocation and pool growth happen once per node, not per run:
        // a separate run on other items pays for them, as db-scheduler gets its own warm-up
        Path warmupScope = writeScope(workDir, "warmup-", warmupItems);
        try (AutoCloseable during = setup.duringWarmup().call()) {
          RunView warmup = create(node, "warmup-" + job, warmupScope, warmupItems).run();
          awaitEnd(node, warmup);
        } finally {
          Files.deleteIfExists(warmupScope);
        }
        timings[0].reset();
        calls.reset();
      }
      long stagingStarted = System.nanoTime();
      RunCoordinator.Created created = create(node, job, scope, items);
      double staging = (System.nanoTime() - stagingStarted) / 1e9;
      RunView run = created.run();
      List<long[]> callsEachSecond;
      try (ResourceMeter meter = ResourceMeter.start(db.server(), setup.sim())) {
        try (AutoCloseable during = setup.duringRun().call();
            ProviderCallCounter.EachSecond seconds = calls.eachSecond()) {
          run = awaitEnd(node, run);
          callsEachSecond = seconds.seconds();
        }
        ResourceMeter.Measured measured = meter.stop();
        double runSeconds =
            run.endedAt() != null
                ? Duration.between(run.createdAt(), run.endedAt()).toNanos() / 1e9
                : measured.wallSeconds();
        long done = run.counts().done();
        long events = db.journalEvents("WorkItem|" + job + "/");
        return new Result(
            db.name(),
            job,
            items,
            workers,
            done,
            run.state().name(),
            staging,
            runSeconds,
            done / runSeconds,
            measured,
            done == 0 ? 0 : events / (double) done,
            timings[0].percentilesMillis(),
            calls.snapshot(),
            run.createdAt().toEpochMilli(),
            run.endedAt() != null ? run.endedAt().toEpochMilli() : System.currentTimeMillis(),
            run.governor() == null
                ? List.of()
                : run.governor().changes().stream()
                    .map(c -> c.at() + " " + c.mode() + " cap " + c.cap() + ": " + c.reason())
                    .toList(),
            callsEachSecond);
      }
    } finally {
      Files.deleteIfExists(scope);
    }
  }

  /** A single node on the bench's database, quiet, on a free port, with the user's overrides. */
  static Map<String, Object> nodeOverrides(
      BenchDatabase db, Path workDir, Map<String, String> configOverrides) {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("fencekeeper.db.url", db.postgres() ? db.url() : "");
    overrides.put("fencekeeper.db.user", db.user());
    overrides.put("fencekeeper.db.password", db.password());
    overrides.put("fencekeeper.data-dir", workDir.toString());
    overrides.put("fencekeeper.seed-nodes", "");
    overrides.put("pekko.remote.artery.canonical.port", 0);
    overrides.put("pekko.loglevel", "WARNING");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    overrides.putAll(configOverrides);
    return overrides;
  }

  private static RunCoordinator.Created create(
      FencekeeperNode node, String job, Path scope, int items) throws Exception {
    RunRequest request =
        new RunRequest(
            job,
            BUSINESS_DATE,
            new Scope.Upload(),
            Instant.now().plus(Duration.ofHours(6)),
            5,
            items);
    RunCoordinator.CreateReply reply;
    try (InputStream upload = Files.newInputStream(scope)) {
      reply = node.runs().create(request, upload).toCompletableFuture().get(30, TimeUnit.MINUTES);
    }
    if (!(reply instanceof RunCoordinator.Created created)) {
      throw new IllegalStateException("bench run not created: " + reply);
    }
    return created;
  }

  private static RunView awaitEnd(FencekeeperNode node, RunView run) throws Exception {
    while (run.state() == RunState.RUNNING) {
      Thread.sleep(100);
      run = node.runs().get(run.runId()).toCompletableFuture().get(60, TimeUnit.SECONDS).get();
    }
    return run;
  }

  /** A scope of {@code items} accounts on disk, so the scope itself never sits in this heap. */
  private static Path writeScope(Path workDir, String prefix, int items) throws IOException {
    Path csv = workDir.resolve("bench-" + prefix + items + ".csv");
    try (BufferedWriter out = Files.newBufferedWriter(csv)) {
      out.write("accountId,cursor\n");
      for (int i = 0; i < items; i++) {
        out.write(prefix);
        out.write(Integer.toString(i));
        out.write("," + CURSOR + "\n");
      }
    }
    return csv;
  }
}

package io.fencekeeper.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.factory.ProviderSettings;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The benchmarks of docs/design.md, "Performance" in one invocation: throughput against db-scheduler on the same
 * database, provider saturation against the ideal N·L/C, and the heap of a large run on one node.
 * Prints a human summary and, with {@code --json}, the same figures machine-readable. Speed is
 * measured here, never asserted in tests.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description =
        "Benchmark Fencekeeper end to end against db-scheduler on the same database (docs/bench.md).")
public final class BenchCommand implements Callable<Integer> {

  @Option(names = "--items", defaultValue = "10000", description = "items (and db-scheduler tasks)")
  int items;

  @Option(
      names = "--workers",
      defaultValue = "256",
      description = "Fencekeeper worker pool size (and the floor bench's items in flight)")
  int workers;

  @Option(
      names = "--warmup",
      defaultValue = "2000",
      description =
          "untimed items (and db-scheduler tasks) run first on the same node / database, so"
              + " neither side is timed while the JIT compiles; the saturation bench gets the"
              + " same warm-up (0 = none)")
  int warmup;

  @Option(
      names = "--databases",
      split = ",",
      defaultValue = "postgres,h2",
      description = "postgres and/or h2 (default: ${DEFAULT-VALUE})")
  List<String> databases;

  @Option(names = "--db-url", description = "a PostgreSQL to use instead of the embedded one")
  String dbUrl;

  @Option(names = "--db-user", defaultValue = "postgres")
  String dbUser;

  @Option(names = "--db-password", defaultValue = "")
  String dbPassword;

  @Option(
      names = "--scheduler-threads",
      split = ",",
      defaultValue = "8,20,50",
      description = "db-scheduler thread counts to try; the best is compared")
  List<Integer> schedulerThreads;

  @Option(names = "--skip-db-scheduler", description = "measure Fencekeeper only")
  boolean skipDbScheduler;

  @Option(
      names = "--skip-pekko-floor",
      description = "skip the bare event-sourced entity per item (the floor of this design)")
  boolean skipPekkoFloor;

  @Option(
      names = "--provider-latency-ms",
      defaultValue = "0",
      description = "saturation: sim provider latency L per call (0 = skip the saturation bench)")
  long providerLatencyMs;

  @Option(names = "--saturation-items", defaultValue = "2000")
  int saturationItems;

  @Option(names = "--cap", description = "saturation: concurrency cap C (default: --workers)")
  Integer cap;

  @Option(
      names = "--scale",
      description = "scale: run this many items (e.g. 1000000) on one node, Fencekeeper only")
  Integer scale;

  @Option(
      names = "--set",
      description = "configuration override for the node, key=value (repeatable)")
  Map<String, String> configOverrides = new LinkedHashMap<>();

  @Option(names = "--work-dir", description = "H2 files and scope CSVs (default: a temp dir)")
  Path workDir;

  @Option(names = "--json", description = "also write the results as JSON to this file")
  Path json;

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    Path dir = workDir != null ? workDir : Files.createTempDirectory("fencekeeper-bench");
    Files.createDirectories(dir);
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("machine", machine());
    report.put("configOverrides", configOverrides);
    report.put("warmup", warmup);
    try {
      if (scale != null) {
        BenchDatabase db = database(databases.get(0), dir.resolve("scale"));
        out.printf("scale: %d items on one node, %s, %d workers%n", scale, db.name(), workers);
        FencekeeperBench.Result result =
            FencekeeperBench.run(
                db, dir.resolve("scale"), scale, 0, workers, new NoopProvider(), configOverrides);
        printFencekeeper(out, result);
        report.put("scale", result);
      } else {
        List<Map<String, Object>> throughput = new ArrayList<>();
        for (String name : databases) {
          throughput.add(throughput(out, name, dir.resolve(name)));
        }
        report.put("throughput", throughput);
      }
      if (providerLatencyMs > 0) {
        report.put("saturation", saturation(out, dir.resolve("saturation")));
      }
    } finally {
      BenchDatabase.stopEmbedded();
    }
    if (json != null) {
      new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .writeValue(json.toFile(), report);
      out.println("results written to " + json);
    }
    return 0;
  }

  private Map<String, Object> throughput(PrintStream out, String name, Path dir) throws Exception {
    Files.createDirectories(dir);
    BenchDatabase db = database(name, dir);
    out.printf(
        "%nthroughput on %s: %d items, no-op provider (after an untimed warm-up of %d)%n",
        db.name(), items, warmup);
    FencekeeperBench.Result fk =
        FencekeeperBench.run(db, dir, items, warmup, workers, new NoopProvider(), configOverrides);
    printFencekeeper(out, fk);
    Map<String, Object> section = new LinkedHashMap<>();
    section.put("database", db.name());
    section.put("fencekeeper", fk);
    if (!skipPekkoFloor) {
      PekkoFloorBench.Result floor =
          PekkoFloorBench.run(db, dir, items, warmup, workers, configOverrides);
      out.printf(
          "  pekko floor  %2d in flight %8.0f items/s  (bare event-sourced entity per item: start,"
              + " recover, persist 1 + 2 events, stop; cpu %.0f µs/item + db %.0f µs/item);"
              + " Fencekeeper at %.0f%% of it%n",
          floor.concurrency(),
          floor.itemsPerSecond(),
          1e6 * floor.resources().cpuSeconds() / items,
          1e6 * floor.resources().databaseCpuSeconds() / items,
          100 * fk.itemsPerSecond() / floor.itemsPerSecond());
      section.put("pekkoFloor", floor);
    }
    if (!skipDbScheduler) {
      if (warmup > 0) {
        DbSchedulerBench.run(db, warmup, schedulerThreads.get(0));
      }
      List<DbSchedulerBench.Result> runs = new ArrayList<>();
      for (int threads : schedulerThreads) {
        DbSchedulerBench.Result r = DbSchedulerBench.run(db, items, threads);
        out.printf(
            "  db-scheduler %2d threads  %8.0f tasks/s  (%.2f s, %s, cpu %.0f µs/task"
                + " + db %.0f µs/task)%n",
            threads,
            r.tasksPerSecond(),
            r.seconds(),
            r.polling(),
            1e6 * r.resources().cpuSeconds() / items,
            1e6 * r.resources().databaseCpuSeconds() / items);
        runs.add(r);
      }
      DbSchedulerBench.Result best =
          runs.stream()
              .max(Comparator.comparingDouble(DbSchedulerBench.Result::tasksPerSecond))
              .orElseThrow();
      double ratio = fk.itemsPerSecond() / best.tasksPerSecond();
      out.printf(
          "  => Fencekeeper %.0f items/s vs db-scheduler best %.0f tasks/s (%d threads):"
              + " ratio %.2f %s%n",
          fk.itemsPerSecond(),
          best.tasksPerSecond(),
          best.threads(),
          ratio,
          ratio >= 1 ? "(target met)" : "(target: >= 1.00)");
      section.put("dbScheduler", runs);
      section.put("dbSchedulerBestThreads", best.threads());
      section.put("ratio", ratio);
    }
    return section;
  }

  private Map<String, Object> saturation(PrintStream out, Path dir) throws Exception {
    Files.createDirectories(dir);
    int c = cap != null ? cap : workers;
    BenchDatabase db = database(databases.get(0), dir);
    // the client gets more connections than the cap, so neither side is the bottleneck
    try (SimProviderServer sim =
            SimProviderServer.start(
                "127.0.0.1",
                0,
                SimFaults.NONE.withLatency(providerLatencyMs, 0),
                1L,
                Math.max(16, 2 * c));
        Provider provider =
            HttpProvider.create(
                sim.baseUrl(),
                ProviderSettings.DEFAULT_CONNECT_TIMEOUT,
                ProviderSettings.DEFAULT_REQUEST_TIMEOUT,
                Math.max(HttpProvider.DEFAULT_MAX_CONNECTIONS, 2 * c))) {
      out.printf(
          "%nsaturation on %s: %d items, sim provider latency L=%d ms per call, cap C=%d%n",
          db.name(), saturationItems, providerLatencyMs, c);
      FencekeeperBench.Result r =
          FencekeeperBench.run(db, dir, saturationItems, warmup, c, provider, configOverrides);
      printFencekeeper(out, r);
      double idealPerCall = saturationItems * providerLatencyMs / 1000.0 / c;
      // every item costs two provider calls, plan (GET) and apply (POST), each delayed by L
      double idealPerItem = 2 * idealPerCall;
      out.printf(
          "  wall %.2f s; ideal N·L/C = %.2f s (ratio %.2f); with 2 calls per item N·2L/C ="
              + " %.2f s (ratio %.2f; target <= 1.15)%n",
          r.runSeconds(),
          idealPerCall,
          r.runSeconds() / idealPerCall,
          idealPerItem,
          r.runSeconds() / idealPerItem);
      Map<String, Object> section = new LinkedHashMap<>();
      section.put("latencyMsPerCall", providerLatencyMs);
      section.put("cap", c);
      section.put("providerCallsPerItem", 2);
      section.put("idealSecondsNLC", idealPerCall);
      section.put("idealSecondsTwoCallsPerItem", idealPerItem);
      section.put("ratioToTwoCallIdeal", r.runSeconds() / idealPerItem);
      section.put("run", r);
      return section;
    }
  }

  private BenchDatabase database(String name, Path dir) throws Exception {
    Files.createDirectories(dir);
    return switch (name) {
      case "postgres", "postgresql" ->
          dbUrl != null
              ? BenchDatabase.external(dbUrl, dbUser, dbPassword)
              : BenchDatabase.embeddedPostgres();
      case "h2" -> BenchDatabase.h2(dir);
      default -> throw new IllegalArgumentException("--databases: postgres or h2, got " + name);
    };
  }

  private static void printFencekeeper(PrintStream out, FencekeeperBench.Result r) {
    ResourceMeter.Measured m = r.resources();
    out.printf(
        "  fencekeeper  %2d workers  %8.0f items/s  (%d/%d done, %s, %.2f s; scope staged in"
            + " %.2f s)%n",
        r.workers(),
        r.itemsPerSecond(),
        r.done(),
        r.items(),
        r.state(),
        r.runSeconds(),
        r.stagingSeconds());
    out.printf(
        "    cpu %.0f µs/item (jvm) + %.0f µs/item (postgres); journal events/item %.2f;"
            + " claim p50 %.1f ms p99 %.1f ms max %.1f ms%n",
        1e6 * m.cpuSeconds() / Math.max(1, r.done()),
        1e6 * m.databaseCpuSeconds() / Math.max(1, r.done()),
        r.journalEventsPerItem(),
        r.claimMillis()[0],
        r.claimMillis()[1],
        r.claimMillis()[2]);
    out.printf(
        "    heap peak %d MiB (pools), live after GC peak %d MiB%n",
        m.heapPeakBytes() >> 20, m.liveHeapAfterGcPeakBytes() >> 20);
  }

  private static Map<String, Object> machine() {
    Map<String, Object> machine = new LinkedHashMap<>();
    machine.put("cores", Runtime.getRuntime().availableProcessors());
    machine.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
    machine.put("java", System.getProperty("java.version"));
    return machine;
  }
}

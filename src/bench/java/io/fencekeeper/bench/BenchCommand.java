package io.fencekeeper.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.PrintStream;
import java.net.URI;
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
 * The benchmarks of docs/design.md, "Performance" in one invocation: throughput against
 * db-scheduler on the same database (no-op work, or the provider comparison's two HTTP calls per
 * item against a sim provider process), provider saturation against the ideal N·L/C, and the heap
 * of a large run on one node. Prints a human summary and, with {@code --json}, the same figures
 * machine-readable. Speed is measured here, never asserted in tests.
 */
@Command(
    name = "java -jar target/fencekeeper-bench.jar",
    mixinStandardHelpOptions = true,
    description =
        "Benchmark Fencekeeper end to end against db-scheduler on the same database"
            + " (docs/bench.md).")
public final class BenchCommand implements Callable<Integer> {

  @Option(
      names = "--items",
      defaultValue = "10000",
      description = "items (and db-scheduler tasks); default: ${DEFAULT-VALUE}")
  int items;

  @Option(
      names = "--workers",
      defaultValue = "256",
      description =
          "Fencekeeper worker pool size (and the floor bench's items in flight); default:"
              + " ${DEFAULT-VALUE}")
  int workers;

  @Option(
      names = "--warmup",
      defaultValue = "2000",
      description =
          "untimed items (and db-scheduler tasks) run first on the same node / database, so"
              + " neither side is timed while the JIT compiles; the saturation bench gets the"
              + " same warm-up (0 = none; default: ${DEFAULT-VALUE})")
  int warmup;

  @Option(
      names = "--databases",
      split = ",",
      defaultValue = "postgres,h2",
      description = "postgres and/or h2 (default: ${DEFAULT-VALUE})")
  List<String> databases;

  @Option(names = "--db-url", description = "a PostgreSQL to use instead of the embedded one")
  String dbUrl;

  @Option(
      names = "--db-user",
      defaultValue = "postgres",
      description = "with --db-url: the role (default: ${DEFAULT-VALUE})")
  String dbUser;

  @Option(
      names = "--db-password",
      defaultValue = "",
      description = "with --db-url: the password (default: none)")
  String dbPassword;

  @Option(
      names = "--embedded-non-durable",
      description =
          "run the embedded PostgreSQL with fsync, synchronous_commit and full_page_writes off"
              + " (a test database's settings; the default is durable, as production runs)")
  boolean embeddedNonDurable;

  @Option(
      names = "--scheduler-threads",
      split = ",",
      defaultValue = "8,20,50",
      description =
          "db-scheduler thread counts to try; the best is compared (default: ${DEFAULT-VALUE})")
  List<Integer> schedulerThreads;

  @Option(names = "--skip-db-scheduler", description = "measure Fencekeeper only")
  boolean skipDbScheduler;

  @Option(
      names = "--skip-pekko-floor",
      description = "skip the bare event-sourced entity per item (the floor of this design)")
  boolean skipPekkoFloor;

  @Option(
      names = "--provider-client",
      defaultValue = "pekko",
      description =
          "provider comparison: Fencekeeper's client to the sim: pekko (the product's), or jdk or"
              + " jdk-direct (a measurement probe on the JDK HttpClient, without the product"
              + " client's limits; jdk-direct runs its tasks on the client's selector thread)")
  String providerClient;

  @Option(
      names = "--warmup-latency-ms",
      defaultValue = "-1",
      description =
          "provider comparison: the sim's latency per call during both warm-ups (set through its"
              + " /admin/faults, put back for the timed runs), so that a run at 300 ms can be"
              + " measured on nodes warmed at 20; default: the sim's own")
  long warmupLatencyMs;

  @Option(
      names = "--noop-provider",
      defaultValue = "in-process",
      description =
          "throughput: the no-op provider in-process (the node calls it directly), plugin (the"
              + " same answers from a Java provider plugin in a jar of its own, loaded as"
              + " FENCEKEEPER_PROVIDER=java: its class loader, threads and timeouts), or both"
              + " (in-process, plugin, plugin, in-process on the same database, and the ratio;"
              + " the target is >= 0.95)")
  String noopProvider;

  @Option(
      names = "--provider-comparison",
      description =
          "instead of no-op items: Fencekeeper with the http provider against a sim provider vs"
              + " db-scheduler tasks making the same two calls (plan, cleanup) by hand")
  boolean providerComparison;

  @Option(
      names = "--sim-url",
      description =
          "provider comparison: a running sim-provider to call (default: the bench starts one in"
              + " its own process)")
  URI simUrl;

  @Option(
      names = "--sim-in-process",
      description =
          "run the sim provider inside the bench's JVM (its CPU then counts as the node's) instead"
              + " of in its own process")
  boolean simInProcess;

  @Option(
      names = "--throttling",
      description =
          "instead of no-op items: Fencekeeper with the http provider against a sim provider,"
              + " unthrottled, with --throttle-share of its calls throttled at random, with a"
              + " rate limit of --throttle-per-second, and with that limit dropping to"
              + " --throttle-drop-to (items/s, share of calls throttled, the sim's requests/s,"
              + " the governor)")
  boolean throttling;

  @Option(
      names = "--throttle-share",
      defaultValue = "0.01",
      description =
          "throttling: the share of calls the sim throttles at random (default:"
              + " ${DEFAULT-VALUE})")
  double throttleShare;

  @Option(
      names = "--throttle-per-second",
      defaultValue = "100",
      description = "throttling: the sim's rate limit, calls a second (default: ${DEFAULT-VALUE})")
  int throttlePerSecond;

  @Option(
      names = "--throttle-drop-to",
      defaultValue = "20",
      description =
          "throttling: a last run where the rate limit drops to this after --throttle-drop-after"
              + " seconds (0 = no such run; default: ${DEFAULT-VALUE})")
  int throttleDropTo;

  @Option(
      names = "--throttle-drop-after",
      defaultValue = "10",
      description = "throttling: seconds into the last run (default: ${DEFAULT-VALUE})")
  int throttleDropAfter;

  @Option(
      names = "--throttle-drop-items",
      defaultValue = "1000",
      description = "throttling: the last run's items (default: ${DEFAULT-VALUE})")
  int throttleDropItems;

  @Option(
      names = "--throttling-latency-ms",
      defaultValue = "20",
      description = "throttling: the sim's latency per call (default: ${DEFAULT-VALUE})")
  long throttlingLatencyMs;

  @Option(
      names = "--provider-latency-ms",
      defaultValue = "0",
      description = "saturation: sim provider latency L per call (0 = skip the saturation bench)")
  long providerLatencyMs;

  @Option(
      names = "--saturation-items",
      defaultValue = "2000",
      description = "saturation: items N (default: ${DEFAULT-VALUE})")
  int saturationItems;

  @Option(names = "--cap", description = "saturation: concurrency cap C (default: --workers)")
  Integer cap;

  @Option(
      names = "--scale",
      description = "scale: run this many items (e.g. 1000000) on one node, Fencekeeper only")
  Integer scale;

  @Option(
      names = "--staging",
      description =
          "staging: this many accounts (e.g. 1000000) created once on each intake path, timed from"
              + " POST to RUNNING on one node with its HTTP API (PostgreSQL only)")
  Integer staging;

  @Option(
      names = "--staging-paths",
      split = ",",
      defaultValue = "file,upload,sql",
      description =
          "staging: the intake paths, in order: file (a CSV in the scope directory), upload"
              + " (text/csv), sql (a SQL scope); default: ${DEFAULT-VALUE}")
  List<String> stagingPaths;

  @Option(
      names = "--history",
      description =
          "history: a node's idle CPU (a live feed open) and GET /api/runs latency with 1 ended"
              + " run, then with this many")
  Integer history;

  @Option(
      names = "--set",
      description = "configuration override for the node, key=value (repeatable)")
  Map<String, String> configOverrides = new LinkedHashMap<>();

  @Option(
      names = "--work-dir",
      description = "H2 files, scope CSVs and sim-provider.log (default: a temp dir)")
  Path workDir;

  @Option(names = "--json", description = "also write the results as JSON to this file")
  Path json;

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    try {
      client();
      noopSides();
    } catch (IllegalArgumentException usage) {
      // a usage error: one line, before anything starts
      System.err.println(usage.getMessage());
      return 2;
    }
    Path dir = workDir != null ? workDir : Files.createTempDirectory("fencekeeper-bench");
    Files.createDirectories(dir);
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("machine", machine());
    report.put("configOverrides", configOverrides);
    report.put("warmup", warmup);
    List<String> failures = new ArrayList<>();
    try {
      if (staging != null) {
        BenchDatabase db = database(databases.get(0), dir.resolve("staging"));
        out.printf(
            "staging: %d accounts on each of %s, one node, POST to RUNNING (after an untimed"
                + " warm-up of %d on each)%n",
            staging,
            stagingPaths,
            warmup);
        printDatabase(out, db);
        List<StagingBench.Result> results =
            StagingBench.run(
                db, dir.resolve("staging"), staging, warmup, stagingPaths, configOverrides);
        for (StagingBench.Result r : results) {
          out.printf(
              "  %-6s %d rows: POST answered %d after %.2f s, RUNNING after %.2f s (%.0f rows/s);"
                  + " peak RSS %d MiB, heap peak %d MiB; cpu %.1f s (jvm) + %s s (database)%n",
              r.path(),
              r.rows(),
              r.createStatus(),
              r.answeredSeconds(),
              r.runningSeconds(),
              r.rowsPerSecond(),
              r.peakRssMiB(),
              r.resources().heapPeakBytes() >> 20,
              r.resources().cpuSeconds(),
              r.resources().databaseCpuSeconds() == null
                  ? "n/a"
                  : String.format("%.1f", r.resources().databaseCpuSeconds()));
          printMachine(out, r.resources());
        }
        report.put("staging", results);
      } else if (history != null) {
        BenchDatabase db = database(databases.get(0), dir.resolve("history"));
        out.printf("history: one node, %s, 1 then %d ended runs%n", db.name(), history);
        printDatabase(out, db);
        List<HistoryBench.Result> results =
            HistoryBench.run(db, dir.resolve("history"), history, configOverrides);
        for (HistoryBench.Result r : results) {
          out.printf(
              "  %5d ended runs: idle node cpu %.2f%% of a core (a live feed open, %d s);"
                  + " GET /api/runs p50 %.1f ms, p99 %.1f ms (%d calls)%n",
              r.endedRuns(),
              r.idleCpuPercent(),
              HistoryBench.IDLE.toSeconds(),
              r.listP50Millis(),
              r.listP99Millis(),
              HistoryBench.LIST_CALLS);
        }
        report.put("history", results);
      } else if (scale != null) {
        BenchDatabase db = database(databases.get(0), dir.resolve("scale"));
        out.printf("scale: %d items on one node, %s, %d workers%n", scale, db.name(), workers);
        printDatabase(out, db);
        FencekeeperBench.Result result =
            FencekeeperBench.run(
                db,
                dir.resolve("scale"),
                scale,
                0,
                FencekeeperBench.Setup.withProvider(workers, new NoopProvider()),
                configOverrides);
        printFencekeeper(out, result);
        report.put("scale", result);
      } else if (throttling) {
        BenchDatabase db = database(databases.get(0), dir.resolve("throttling"));
        try (Sim sim =
            simUrl != null
                ? Sim.external(simUrl)
                : simInProcess
                    ? Sim.inProcess(throttlingLatencyMs, Math.max(16, 2 * workers))
                    : Sim.startProcess(dir, throttlingLatencyMs, Math.max(16, 2 * workers))) {
          Map<String, Object> section =
              ThrottlingBench.run(
                  out,
                  db,
                  dir,
                  sim,
                  new ThrottlingBench.Sizes(
                      items,
                      warmup,
                      workers,
                      throttleShare,
                      throttlePerSecond,
                      throttleDropTo,
                      throttleDropAfter,
                      throttleDropItems),
                  configOverrides);
          failures.addAll(ProviderComparison.failures(section));
          report.put("throttling", section);
        }
      } else if (providerComparison) {
        List<Map<String, Object>> sections = new ArrayList<>();
        try (Sim sim = sim(dir, 0, Math.max(16, workers))) {
          for (String name : databases) {
            Path sub = dir.resolve("provider-" + name);
            BenchDatabase db = database(name, sub);
            Map<String, Object> section =
                ProviderComparison.run(
                    out,
                    db,
                    sub,
                    sim,
                    new ProviderComparison.Sizes(
                        items,
                        warmup,
                        workers,
                        skipDbScheduler ? List.of() : schedulerThreads,
                        warmupLatencyMs,
                        client()),
                    configOverrides);
            failures.addAll(ProviderComparison.failures(section));
            sections.add(section);
          }
        }
        report.put("providerComparison", sections);
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
    if (!failures.isEmpty()) {
      // a bench that did not do the work it timed has no figures worth reading
      System.err.println("bench FAILED:");
      failures.forEach(f -> System.err.println("  " + f));
      return 1;
    }
    return 0;
  }

  private Map<String, Object> throughput(PrintStream out, String name, Path dir) throws Exception {
    Files.createDirectories(dir);
    BenchDatabase db = database(name, dir);
    out.printf(
        "%nthroughput on %s: %d items, no-op provider %s (after an untimed warm-up of %d)%n",
        db.name(), items, noopProvider, warmup);
    printDatabase(out, db);
    Map<String, Object> section = new LinkedHashMap<>();
    FencekeeperBench.Result fk = null;
    Map<String, List<Double>> perSide = new LinkedHashMap<>();
    for (String side : noopSides()) {
      out.printf("  no-op provider %s:%n", side);
      FencekeeperBench.Result result =
          FencekeeperBench.run(
              db,
              dir,
              items,
              warmup,
              side.equals("plugin")
                  ? FencekeeperBench.Setup.noopPlugin(workers, dir)
                  : FencekeeperBench.Setup.withProvider(workers, new NoopProvider()),
              configOverrides);
      printFencekeeper(out, result);
      perSide.computeIfAbsent(side, s -> new ArrayList<>()).add(result.itemsPerSecond());
      fk = fk == null ? result : fk;
    }
    if (perSide.size() == 2) {
      double inProcess = mean(perSide.get("in-process"));
      double plugin = mean(perSide.get("plugin"));
      double ratio = plugin / inProcess;
      out.printf(
          "  => no-op through the plugin path %.0f items/s vs in-process %.0f items/s (each the"
              + " mean of 2, run in-process, plugin, plugin, in-process): ratio %.3f %s%n",
          plugin,
          inProcess,
          ratio,
          ratio >= 0.95 ? "(target met)" : "(target: >= 0.95)");
      section.put("noopItemsPerSecond", perSide);
      section.put("pluginToInProcessRatio", ratio);
    }
    section.put("database", db.name());
    section.put("databaseSettings", db.settings());
    section.put("databaseCpu", db.server().description());
    section.put("fencekeeper", fk);
    if (!skipPekkoFloor) {
      PekkoFloorBench.Result floor =
          PekkoFloorBench.run(db, dir, items, warmup, workers, configOverrides);
      out.printf(
          "  pekko floor  %2d in flight %8.0f items/s  (bare event-sourced entity per item: start,"
              + " recover, persist 1 + 2 events, stop; cpu %s µs/item + db %s µs/item);"
              + " Fencekeeper at %.0f%% of it%n",
          floor.concurrency(),
          floor.itemsPerSecond(),
          CpuPer.show(floor.resources().cpuSeconds(), items),
          CpuPer.show(floor.resources().databaseCpuSeconds(), items),
          100 * fk.itemsPerSecond() / floor.itemsPerSecond());
      printMachine(out, floor.resources());
      section.put("pekkoFloor", floor);
    }
    if (!skipDbScheduler) {
      // on H2, db-scheduler gets a file of its own: the nodes of the phases before it stopped in
      // this JVM, and an H2 file whose thread a shutdown interrupted can lose what is written to
      // it next (docs/testing.md, the H2 reopen): once the scheduler's table vanished between two
      // of its runs. PostgreSQL, where the figures that count are taken, stays one database.
      BenchDatabase schedulerDb =
          db.postgres() ? db : BenchDatabase.h2(Files.createDirectories(dir.resolve("scheduler")));
      if (warmup > 0) {
        DbSchedulerBench.run(schedulerDb, warmup, schedulerThreads.get(0));
      }
      List<DbSchedulerBench.Result> runs = new ArrayList<>();
      for (int threads : schedulerThreads) {
        DbSchedulerBench.Result r = DbSchedulerBench.run(schedulerDb, items, threads);
        printDbScheduler(out, r);
        runs.add(r);
      }
      DbSchedulerBench.Result best = best(runs);
      double ratio = fk.itemsPerSecond() / best.tasksPerSecond();
      out.printf(
          "  => Fencekeeper %.0f items/s vs db-scheduler best %.0f tasks/s (%d threads):"
              + " ratio %.2f %s%n",
          fk.itemsPerSecond(),
          best.tasksPerSecond(),
          best.threads(),
          ratio,
          ratio >= 1 ? "(target met)" : "(target: >= 1.00)");
      Map<String, Map<String, Double>> perItem =
          CpuPer.compare(fk.resources(), fk.done(), best.resources(), items, false);
      out.println("     " + CpuPer.line("item", perItem));
      section.put("dbScheduler", runs);
      section.put("dbSchedulerBestThreads", best.threads());
      section.put("ratio", ratio);
      section.put("cpuPerItem", perItem);
    }
    return section;
  }

  private Map<String, Object> saturation(PrintStream out, Path dir) throws Exception {
    Files.createDirectories(dir);
    int c = cap != null ? cap : workers;
    BenchDatabase db = database(databases.get(0), dir);
    // the sim gets more request threads than the cap, so it is never the bottleneck
    try (Sim sim = saturationSim(dir, c)) {
      out.printf(
          "%nsaturation on %s: %d items, sim provider latency L=%d ms per call, cap C=%d; %s%n",
          db.name(), saturationItems, providerLatencyMs, c, sim.description());
      printDatabase(out, db);
      FencekeeperBench.Result r =
          FencekeeperBench.run(
              db,
              dir,
              saturationItems,
              warmup,
              FencekeeperBench.Setup.httpProvider(c, sim),
              configOverrides);
      printFencekeeper(out, r);
      printCalls(out, r);
      double idealPerCall = saturationItems * providerLatencyMs / 1000.0 / c;
      // every item costs two provider calls, plan (GET) and apply (POST), each delayed by L
      double idealPerItem = 2 * idealPerCall;
      // ...but the sim's plan has nothing to do for one account in ten: those make one call
      long calls = r.totalProviderCalls();
      double idealCallsMade = calls * providerLatencyMs / 1000.0 / c;
      out.printf(
          "  wall %.2f s; ideal N·L/C = %.2f s (ratio %.2f); with 2 calls per item N·2L/C ="
              + " %.2f s (ratio %.2f); with the %d calls made calls·L/C = %.2f s (ratio %.2f;"
              + " target <= 1.15)%n",
          r.runSeconds(),
          idealPerCall,
          r.runSeconds() / idealPerCall,
          idealPerItem,
          r.runSeconds() / idealPerItem,
          calls,
          idealCallsMade,
          r.runSeconds() / idealCallsMade);
      Map<String, Object> section = new LinkedHashMap<>();
      section.put("latencyMsPerCall", providerLatencyMs);
      section.put("cap", c);
      section.put("sim", sim.description());
      section.put("providerCallsPerItem", 2);
      section.put("idealSecondsNLC", idealPerCall);
      section.put("idealSecondsTwoCallsPerItem", idealPerItem);
      section.put("ratioToTwoCallIdeal", r.runSeconds() / idealPerItem);
      section.put("providerCallsMade", calls);
      section.put("idealSecondsCallsMade", idealCallsMade);
      section.put("ratioToCallsMadeIdeal", r.runSeconds() / idealCallsMade);
      section.put("run", r);
      return section;
    }
  }

  /** The provider comparison's sim: the user's, one in this JVM, or (default) its own process. */
  private Sim sim(Path dir, long latencyMs, int threads) throws Exception {
    if (simUrl != null) {
      return Sim.external(simUrl);
    }
    return simInProcess
        ? Sim.inProcess(latencyMs, threads)
        : Sim.startProcess(dir, latencyMs, threads);
  }

  /** Saturation sets the latency itself, so it never calls a sim at --sim-url. */
  private Sim saturationSim(Path dir, int cap) throws Exception {
    int threads = Math.max(16, 2 * cap);
    return simInProcess
        ? Sim.inProcess(providerLatencyMs, threads)
        : Sim.startProcess(dir, providerLatencyMs, threads);
  }

  private BenchDatabase database(String name, Path dir) throws Exception {
    Files.createDirectories(dir);
    return switch (name) {
      case "postgres", "postgresql" ->
          dbUrl != null
              ? BenchDatabase.external(dbUrl, dbUser, dbPassword)
              : BenchDatabase.embeddedPostgres(!embeddedNonDurable);
      case "h2" -> BenchDatabase.h2(dir);
      default -> throw new IllegalArgumentException("--databases: postgres or h2, got " + name);
    };
  }

  static DbSchedulerBench.Result best(List<DbSchedulerBench.Result> runs) {
    return runs.stream()
        .max(Comparator.comparingDouble(DbSchedulerBench.Result::tasksPerSecond))
        .orElseThrow();
  }

  static void printDatabase(PrintStream out, BenchDatabase db) {
    out.printf(
        "  database: %s; its CPU: %s%n",
        db.settings() != null ? db.settings() : "H2 file in this JVM", db.server().description());
  }

  static void printFencekeeper(PrintStream out, FencekeeperBench.Result r) {
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
        "    cpu %s µs/item (jvm) + %s µs/item (database); journal events/item %.2f;"
            + " claim p50 %.1f ms p99 %.1f ms max %.1f ms%n",
        CpuPer.show(m.cpuSeconds(), r.done()),
        CpuPer.show(m.databaseCpuSeconds(), r.done()),
        r.journalEventsPerItem(),
        r.claimMillis()[0],
        r.claimMillis()[1],
        r.claimMillis()[2]);
    out.printf(
        "    heap peak %d MiB (pools), live after GC peak %d MiB%n",
        m.heapPeakBytes() >> 20, m.liveHeapAfterGcPeakBytes() >> 20);
    printMachine(out, m);
  }

  /** Provider calls of a Fencekeeper run, and what each cost the node and the sim. */
  static void printCalls(PrintStream out, FencekeeperBench.Result r) {
    long calls = r.totalProviderCalls();
    out.printf(
        "    provider calls %d %s: node jvm %s µs/call, sim %s µs/call%n",
        calls,
        r.providerCalls(),
        CpuPer.show(r.resources().cpuSeconds(), calls),
        CpuPer.show(r.resources().simCpuSeconds(), calls));
  }

  static void printDbScheduler(PrintStream out, DbSchedulerBench.Result r) {
    out.printf(
        "  db-scheduler %2d threads  %8.0f tasks/s  (%.2f s, %s, cpu %s µs/task"
            + " + db %s µs/task)%n",
        r.threads(),
        r.tasksPerSecond(),
        r.seconds(),
        r.polling(),
        CpuPer.show(r.resources().cpuSeconds(), r.tasks()),
        CpuPer.show(r.resources().databaseCpuSeconds(), r.tasks()));
    printMachine(out, r.resources());
  }

  /** The shared machine's state over a phase, so every figure carries its noise. */
  static void printMachine(PrintStream out, ResourceMeter.Measured m) {
    out.printf(
        "    machine: load %.2f -> %.2f; foreign cpu %s cores%n",
        m.loadAverage()[0],
        m.loadAverage()[1],
        m.foreignCores() == null ? "n/a" : String.format("%.2f", m.foreignCores()));
  }

  private static Map<String, Object> machine() {
    Map<String, Object> machine = new LinkedHashMap<>();
    machine.put("cores", Runtime.getRuntime().availableProcessors());
    machine.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
    machine.put("java", System.getProperty("java.version"));
    return machine;
  }

  /** {@code --noop-provider}: the sides the throughput runs, in order. */
  private List<String> noopSides() {
    return switch (noopProvider) {
      case "in-process" -> List.of("in-process");
      case "plugin" -> List.of("plugin");
      case "both" -> List.of("in-process", "plugin", "plugin", "in-process");
      default ->
          throw new IllegalArgumentException(
              "--noop-provider: in-process, plugin or both, got " + noopProvider);
    };
  }

  private static double mean(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).average().orElse(0);
  }

  /** {@code --provider-client}: pekko, jdk or jdk-direct, anything else refused by name. */
  private ProviderComparison.Client client() {
    return switch (providerClient) {
      case "pekko" -> ProviderComparison.Client.PEKKO;
      case "jdk" -> ProviderComparison.Client.JDK;
      case "jdk-direct" -> ProviderComparison.Client.JDK_DIRECT;
      default ->
          throw new IllegalArgumentException(
              "--provider-client: pekko, jdk or jdk-direct, got " + providerClient);
    };
  }
}

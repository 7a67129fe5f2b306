package io.fencekeeper.bench;

import io.fencekeeper.item.ItemId;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The provider comparison: the same N items against the same sim provider on the same database,
 * each making the item's two provider calls (plan, cleanup). Fencekeeper runs with the {@code http}
 * provider from its configuration ({@code fencekeeper.provider}, as {@code
 * FENCEKEEPER_PROVIDER=http} sets it) and the governor opened to its worker count; db-scheduler
 * runs one-time tasks that make the calls by hand ({@link ProviderCalls}). Afterwards the sim's
 * ledger must show exactly one effect per item that had something to do, on both sides ({@link
 * LedgerCheck}).
 */
final class ProviderComparison {

  /** How much work, and how much concurrency on each side. */
  /** {@code warmupLatencyMs}: the sim's latency during both warm-ups; -1 leaves it as it is. */
  record Sizes(
      int items,
      int warmup,
      int workers,
      List<Integer> schedulerThreads,
      long warmupLatencyMs,
      Client client) {}

  /** Fencekeeper's client to the sim: the product's, or the JDK client probe (two ways). */
  enum Client {
    PEKKO,
    JDK,
    JDK_DIRECT
  }

  /** The product's http provider on the sim, or the JDK client probe; warmed as asked. */
  private static FencekeeperBench.Setup fencekeeperSetup(Sizes sizes, Sim sim) {
    FencekeeperBench.Setup setup =
        sizes.client() == Client.PEKKO
            ? FencekeeperBench.Setup.httpProvider(sizes.workers(), sim)
            : FencekeeperBench.Setup.withProvider(
                sizes.workers(),
                new JdkClientProbe(sim.baseUrl(), sizes.client() == Client.JDK_DIRECT));
    return sizes.warmupLatencyMs() < 0 ? setup : setup.warmingAt(sim, sizes.warmupLatencyMs());
  }

  private ProviderComparison() {}

  static Map<String, Object> run(
      PrintStream out,
      BenchDatabase db,
      Path dir,
      Sim sim,
      Sizes sizes,
      Map<String, String> configOverrides)
      throws Exception {
    int n = sizes.items();
    out.printf(
        "%nprovider comparison on %s: %d items, two provider calls per item (plan, cleanup) to %s"
            + " at %s (after an untimed warm-up of %d%s)%n",
        db.name(),
        n,
        sim.description(),
        sim.baseUrl(),
        sizes.warmup(),
        sizes.warmupLatencyMs() < 0
            ? ""
            : " with the sim at " + sizes.warmupLatencyMs() + " ms a call");
    BenchCommand.printDatabase(out, db);
    out.printf(
        "  fencekeeper: "
            + (sizes.client() == Client.PEKKO
                ? "http provider"
                : "the JDK client probe (" + sizes.client() + ")")
            + ", %d workers, governor caps %d/%d/1;"
            + " db-scheduler: tasks calling with the JDK HttpClient, synchronously%n",
        sizes.workers(), sizes.workers(), sizes.workers());
    ProviderCalls calls = new ProviderCalls(sim.baseUrl());
    Map<String, Object> section = new LinkedHashMap<>();
    section.put("database", db.name());
    section.put("databaseSettings", db.settings());
    section.put("databaseCpu", db.server().description());
    section.put("sim", sim.description());
    section.put("simCpu", sim.cpu().description());
    List<String> failures = new ArrayList<>();

    FencekeeperBench.Result fk =
        FencekeeperBench.run(
            db,
            dir,
            n,
            sizes.warmup(),
            fencekeeperSetup(sizes, sim),
            configOverrides);
    BenchCommand.printFencekeeper(out, fk);
    BenchCommand.printCalls(out, fk);
    section.put("fencekeeper", fk);
    long fkCalls = fk.totalProviderCalls();
    if (fk.done() != n) {
      failures.add(
          String.format("Fencekeeper finished %d of %d items (%s)", fk.done(), n, fk.state()));
    }
    Map<String, String> jobs = new LinkedHashMap<>();
    jobs.put("fencekeeper", fk.job());

    List<DbSchedulerBench.Result> runs = new ArrayList<>();
    String stamp = Long.toString(System.currentTimeMillis(), 36);
    if (!sizes.schedulerThreads().isEmpty()) {
      if (sizes.warmup() > 0) {
        try (AutoCloseable during =
            sizes.warmupLatencyMs() < 0 ? () -> {} : sim.latencyFor(sizes.warmupLatencyMs())) {
          DbSchedulerBench.run(
            db,
            sizes.warmup(),
            sizes.schedulerThreads().get(0),
            body(calls, "dbs-warmup-" + stamp),
            sim.cpu());
        }
      }
      for (int threads : sizes.schedulerThreads()) {
        String job = "dbs" + threads + "-" + stamp;
        DbSchedulerBench.Result r =
            DbSchedulerBench.run(db, n, threads, body(calls, job), sim.cpu());
        BenchCommand.printDbScheduler(out, r);
        out.printf(
            "    provider calls %d (failed tasks %d): node jvm %s µs/call, sim %s µs/call%n",
            r.calls(),
            r.failures(),
            CpuPer.show(r.resources().cpuSeconds(), r.calls()),
            CpuPer.show(r.resources().simCpuSeconds(), r.calls()));
        if (r.failures() > 0) {
          failures.add(
              String.format(
                  "db-scheduler %d threads: %d tasks failed, first: %s",
                  threads, r.failures(), r.firstFailure()));
        }
        runs.add(r);
        jobs.put("db-scheduler " + threads + " threads", job);
      }
      DbSchedulerBench.Result best = BenchCommand.best(runs);
      double ratio = fk.itemsPerSecond() / best.tasksPerSecond();
      out.printf(
          "  => Fencekeeper %.0f items/s vs db-scheduler best %.0f items/s (%d threads):"
              + " ratio %.2f%n",
          fk.itemsPerSecond(), best.tasksPerSecond(), best.threads(), ratio);
      Map<String, Map<String, Double>> perItem =
          CpuPer.compare(fk.resources(), fk.done(), best.resources(), n, true);
      Map<String, Map<String, Double>> perCall =
          CpuPer.compare(fk.resources(), fkCalls, best.resources(), best.calls(), true);
      perCall.remove("database");
      out.println("     " + CpuPer.line("item", perItem));
      out.println("     " + CpuPer.line("provider call", perCall));
      section.put("dbScheduler", runs);
      section.put("dbSchedulerBestThreads", best.threads());
      section.put("ratio", ratio);
      section.put("cpuPerItem", perItem);
      section.put("cpuPerCall", perCall);
    }

    List<LedgerCheck> checks = checkLedger(calls, jobs, n);
    for (LedgerCheck check : checks) {
      out.println("  ledger " + check);
      if (!check.ok()) {
        failures.add("the sim's ledger does not show one effect per item: " + check);
      }
    }
    ProviderCalls.Ledger ledger = calls.ledger();
    long effects = ledger.effects().values().stream().mapToLong(Long::longValue).sum();
    out.printf(
        "  sim ledger in all (warm-ups included): %d cleanup requests received, %d effects"
            + " applied under %d keys%n",
        ledger.requests(), effects, ledger.effects().size());
    section.put("ledgerChecks", checks);
    section.put("failures", failures);
    return section;
  }

  @SuppressWarnings("unchecked")
  static List<String> failures(Map<String, Object> section) {
    return (List<String>) section.get("failures");
  }

  /** A db-scheduler task's work for account {@code acct-<i>}: the item's calls, by hand. */
  private static DbSchedulerBench.Body body(ProviderCalls calls, String job) {
    return account -> calls.reconcile(item(job, account));
  }

  static ItemId item(String job, String account) {
    return ItemId.of(job, FencekeeperBench.BUSINESS_DATE, account, FencekeeperBench.CURSOR);
  }

  /**
   * One check per side, read after all of them ran: which of the side's items have an action is
   * asked of the sim again (untimed), so the check depends on neither side's own account of it.
   */
  static List<LedgerCheck> checkLedger(ProviderCalls calls, Map<String, String> jobs, int n)
      throws Exception {
    ProviderCalls.Ledger ledger = calls.ledger();
    List<LedgerCheck> checks = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      for (Map.Entry<String, String> side : jobs.entrySet()) {
        List<String> keys = new ArrayList<>(n);
        Set<String> toApply = ConcurrentHashMap.newKeySet();
        List<Future<?>> asked = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          ItemId item = item(side.getValue(), "acct-" + i);
          keys.add(item.idempotencyKey());
          asked.add(
              pool.submit(
                  () -> {
                    if (!calls.plan(item).nothingToDo()) {
                      toApply.add(item.idempotencyKey());
                    }
                    return null;
                  }));
        }
        for (Future<?> f : asked) {
          f.get();
        }
        checks.add(LedgerCheck.of(side.getKey(), keys, toApply, ledger.effects()));
      }
    } finally {
      pool.shutdownNow();
    }
    return checks;
  }
}

package io.fencekeeper.bench;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The governor against a throttling provider (docs/design.md, "The governor"; issue 50): the same
 * items through one node against a sim provider, unthrottled, with a share of its calls throttled
 * at random ({@code throttleShare}: noise), with a rate limit ({@code throttlePerSecond}), and with
 * a rate limit that drops in the middle of the run. For each: items a second, the share of the
 * node's calls answered 429, the requests a second the sim received (its {@code GET
 * /admin/stats}, 429s included), the governor's decisions, and the sim's ledger (one effect per
 * item). Every warm-up runs unthrottled; each run has a node of its own.
 */
final class ThrottlingBench {

  /**
   * What to run: {@code share} of calls throttled at random, a limit of {@code perSecond} calls a
   * second, and (when {@code dropTo} is above 0) a run of {@code dropItems} whose limit drops to
   * {@code dropTo} {@code dropAfterSeconds} into it.
   */
  record Sizes(
      int items,
      int warmup,
      int workers,
      double share,
      int perSecond,
      int dropTo,
      int dropAfterSeconds,
      int dropItems) {}

  /** What one run against the sim gave. */
  record Measured(
      String throttling,
      FencekeeperBench.Result run,
      double itemsPerSecond,
      long calls,
      long throttled,
      double acceptedCallsPerSecond,
      double throttledShare,
      double settledAcceptedCallsPerSecond,
      double settledThrottledShare,
      Map<Long, Long> simRequestsPerSecond,
      String simRequests) {}

  /** The sim's throttling knobs off. */
  private static final Map<String, Number> UNTHROTTLED =
      Map.of("throttleShare", 0.0, "throttlePerSecond", 0.0);

  private final PrintStream out;
  private final BenchDatabase db;
  private final Path dir;
  private final Sim sim;
  private final Sizes sizes;
  private final Map<String, String> configOverrides;
  private final List<String> failures = new ArrayList<>();

  private ThrottlingBench(
      PrintStream out,
      BenchDatabase db,
      Path dir,
      Sim sim,
      Sizes sizes,
      Map<String, String> configOverrides) {
    this.out = out;
    this.db = db;
    this.dir = dir;
    this.sim = sim;
    this.sizes = sizes;
    this.configOverrides = configOverrides;
  }

  static Map<String, Object> run(
      PrintStream out,
      BenchDatabase db,
      Path dir,
      Sim sim,
      Sizes sizes,
      Map<String, String> configOverrides)
      throws Exception {
    return new ThrottlingBench(out, db, dir, sim, sizes, configOverrides).run();
  }

  private Map<String, Object> run() throws Exception {
    out.printf(
        "%nthrottling on %s: %d items, %d workers (the governor's caps opened to them), against"
            + " %s at %s (each warm-up of %d unthrottled)%n",
        db.name(),
        sizes.items(),
        sizes.workers(),
        sim.description(),
        sim.baseUrl(),
        sizes.warmup());
    BenchCommand.printDatabase(out, db);
    Map<String, Object> section = new LinkedHashMap<>();
    section.put("database", db.name());
    section.put("sim", sim.description());
    section.put("workers", sizes.workers());

    Measured unthrottled = measure("unthrottled", UNTHROTTLED, null, sizes.items());
    section.put("unthrottled", unthrottled);

    Measured noise =
        measure(
            "throttleShare " + sizes.share(),
            Map.of("throttleShare", sizes.share(), "throttlePerSecond", 0.0),
            null,
            sizes.items());
    double ratio = noise.itemsPerSecond() / unthrottled.itemsPerSecond();
    out.printf("    => %.2f of the unthrottled items/s (target >= 0.80)%n", ratio);
    section.put("throttleShare", noise);
    section.put("throttleShareRatio", ratio);

    Map<String, Number> limit =
        Map.of("throttleShare", 0.0, "throttlePerSecond", sizes.perSecond());
    Measured limited =
        measure("throttlePerSecond " + sizes.perSecond(), limit, null, sizes.items());
    double ofRate = limited.acceptedCallsPerSecond() / sizes.perSecond();
    double settledOfRate = limited.settledAcceptedCallsPerSecond() / sizes.perSecond();
    out.printf(
        "    => over the run %.2f of the provider's rate accepted, %.1f %% of calls throttled;"
            + " settled %.2f and %.1f %% (targets: >= 0.80, <= 5 %%)%n",
        ofRate,
        100 * limited.throttledShare(),
        settledOfRate,
        100 * limited.settledThrottledShare());
    section.put("throttlePerSecond", limited);
    section.put("throttlePerSecondRatio", ofRate);
    section.put("throttlePerSecondSettledRatio", settledOfRate);

    if (sizes.dropTo() > 0) {
      Measured drop =
          measure(
              "throttlePerSecond "
                  + sizes.perSecond()
                  + " dropping to "
                  + sizes.dropTo()
                  + " after "
                  + sizes.dropAfterSeconds()
                  + " s",
              limit,
              Map.of("throttlePerSecond", sizes.dropTo()),
              sizes.dropItems());
      section.put("throttleDrop", drop);
    }
    section.put("failures", failures);
    return section;
  }

  /**
   * One node, {@code items} items against the sim with {@code knobs}; {@code drop} (null: none) set
   * on the sim {@link Sizes#dropAfterSeconds()} into the run.
   */
  private Measured measure(
      String name, Map<String, Number> knobs, Map<String, Number> drop, int items)
      throws Exception {
    FencekeeperBench.Setup setup =
        FencekeeperBench.Setup.httpProvider(sizes.workers(), sim)
            .holding(() -> sim.faultsFor(UNTHROTTLED), () -> later(drop));
    FencekeeperBench.Result r;
    Path work = Files.createDirectories(dir.resolve("throttling"));
    try (AutoCloseable throttled = sim.faultsFor(knobs)) {
      r = FencekeeperBench.run(db, work, items, sizes.warmup(), setup, configOverrides);
    }
    // the sim's faults are put back: the check's own plans are not throttled
    for (LedgerCheck check :
        ProviderComparison.checkLedger(
            new ProviderCalls(sim.baseUrl()), Map.of(name, r.job()), items)) {
      out.println("    ledger " + check);
      if (!check.ok()) {
        failures.add("the sim's ledger does not show one effect per item: " + check);
      }
    }
    if (r.done() != items) {
      failures.add(String.format("%s: %d of %d items done (%s)", name, r.done(), items, r.state()));
    }
    long calls = r.totalProviderCalls();
    long throttled = r.throttledProviderCalls();
    double seconds = r.runSeconds();
    // the seconds the run was running in, the first and the last included
    long from = r.createdAtMillis() / 1000;
    long to = r.endedAtMillis() / 1000;
    Map<Long, Long> perSecond = new LinkedHashMap<>();
    sim.requestsPerSecond()
        .forEach(
            (second, n) -> {
              if (second >= from && second <= to) {
                perSecond.put(second, n);
              }
            });
    long dropAt = drop == null ? -1 : r.createdAtMillis() / 1000 + sizes.dropAfterSeconds();
    // settled: the second half of the run's seconds (after the drop, the half of those after it)
    List<long[]> eachSecond = r.callsEachSecond();
    int settledFrom = drop == null ? eachSecond.size() / 2 : sizes.dropAfterSeconds();
    List<long[]> settled =
        eachSecond.subList(Math.min(settledFrom, eachSecond.size()), eachSecond.size());
    settled = settled.subList(drop == null ? 0 : settled.size() / 2, settled.size());
    long settledCalls = settled.stream().mapToLong(c -> c[0]).sum();
    long settledThrottled = settled.stream().mapToLong(c -> c[1]).sum();
    Measured m =
        new Measured(
            name,
            r,
            r.itemsPerSecond(),
            calls,
            throttled,
            (calls - throttled) / seconds,
            calls == 0 ? 0 : throttled / (double) calls,
            settled.isEmpty() ? 0 : (settledCalls - settledThrottled) / (double) settled.size(),
            settledCalls == 0 ? 0 : settledThrottled / (double) settledCalls,
            perSecond,
            describe(perSecond, dropAt));
    out.printf(
        "  %s: %.1f items/s (%d/%d done, %s, %.1f s); %d calls, %.2f %% throttled, %.1f accepted"
            + " calls/s%n",
        name,
        m.itemsPerSecond(),
        r.done(),
        r.items(),
        r.state(),
        seconds,
        calls,
        100 * m.throttledShare(),
        m.acceptedCallsPerSecond());
    out.printf(
        "    settled (the last %d s%s): %.1f accepted calls/s, %.2f %% of %d calls throttled%n",
        settled.size(),
        drop == null ? ", half the run" : ", the second half of those after the drop",
        m.settledAcceptedCallsPerSecond(),
        100 * m.settledThrottledShare(),
        settledCalls);
    out.printf("    sim: %s%n", m.simRequests());
    List<String> throttledDecisions =
        r.governorChanges().stream().filter(c -> c.contains(" THROTTLED ")).toList();
    out.printf(
        "    governor: %d THROTTLED decisions logged, least cap %d%s%n",
        throttledDecisions.size(),
        leastCap(r.governorChanges(), sizes.workers()),
        throttledDecisions.isEmpty() ? "" : "; the first: " + throttledDecisions.get(0));
    BenchCommand.printMachine(out, r.resources());
    return m;
  }

  /** Sets {@code drop} on the sim a while into the run; nothing when null. */
  private AutoCloseable later(Map<String, Number> drop) {
    if (drop == null) {
      return () -> {};
    }
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    // put back with the rest of the run's knobs, when the handle of measure() closes
    timer.schedule(
        (Callable<AutoCloseable>) () -> sim.faultsFor(drop),
        sizes.dropAfterSeconds(),
        TimeUnit.SECONDS);
    return () -> {
      timer.shutdownNow();
      timer.awaitTermination(10, TimeUnit.SECONDS);
    };
  }

  /**
   * The sim's requests a second over a run: mean, least and most; with a drop at {@code
   * dropAtSecond} (an epoch second, -1: none), the seconds before and after it apart, how many
   * seconds after it the requests first fell to half of the last second before it, and the first
   * seconds after it one by one.
   */
  static String describe(Map<Long, Long> perSecond, long dropAtSecond) {
    if (perSecond.isEmpty()) {
      return "no requests counted";
    }
    if (dropAtSecond < 0) {
      return spread("requests/s", perSecond.values());
    }
    List<Long> before = new ArrayList<>();
    List<Long> after = new ArrayList<>();
    perSecond.forEach((second, n) -> (second < dropAtSecond ? before : after).add(n));
    String fell = "";
    if (!before.isEmpty()) {
      long last = before.get(before.size() - 1);
      fell = "; never fell to half of " + last + " requests/s";
      for (int i = 0; i < after.size(); i++) {
        if (after.get(i) <= last / 2) {
          fell = "; fell to half of " + last + " requests/s " + i + " s after the drop";
          break;
        }
      }
    }
    return spread("before the drop requests/s", before)
        + "; "
        + spread("after it", after)
        + fell
        + "; second by second after it: "
        + after.subList(0, Math.min(15, after.size()));
  }

  private static String spread(String what, Collection<Long> values) {
    if (values.isEmpty()) {
      return what + " none";
    }
    long sum = values.stream().mapToLong(Long::longValue).sum();
    return String.format(
        "%s mean %.1f, least %d, most %d over %d s",
        what,
        sum / (double) values.size(),
        values.stream().mapToLong(Long::longValue).min().orElse(0),
        values.stream().mapToLong(Long::longValue).max().orElse(0),
        values.size());
  }

  /** The least cap the logged decisions show ({@code workers}: the cap a run starts at). */
  private static int leastCap(List<String> changes, int workers) {
    int least = workers;
    for (String change : changes) {
      int at = change.indexOf(" cap ");
      int end = at < 0 ? -1 : change.indexOf(':', at);
      if (end > at) {
        try {
          least = Math.min(least, Integer.parseInt(change.substring(at + 5, end).trim()));
        } catch (NumberFormatException notACap) {
          // a reason that says "cap" otherwise: not a decision's cap
        }
      }
    }
    return least;
  }
}

package io.fencekeeper.api.metrics;

import io.fencekeeper.archive.RetentionListener;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.budget.BudgetView;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.governor.FleetView;
import io.fencekeeper.run.governor.GovernorPolicy;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.verify.VerificationView;
import io.fencekeeper.verify.Verifications;
import io.fencekeeper.worker.ItemAttempt;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Fencekeeper's Prometheus metrics (docs/design.md, "Observability"). Per-run figures come from the
 * coordinator's run views, refreshed before every scrape; claims, stale rejections and item command
 * latency from {@link MeteredItemGateway}; provider calls from this class as the workers' {@link
 * ItemAttempt.AttemptListener}; retention's runs archived, rows deleted and bytes archived from the
 * retention keeper while it runs on this node (sum them over the nodes). Names follow Prometheus
 * conventions: base units, {@code _total} on counters.
 */
public final class ApiMetrics implements ItemAttempt.AttemptListener, RetentionListener {

  private static final List<String> STATUSES =
      List.of("pending", "leased", "done", "failed", "closed", "quarantined");

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Map<String, RunView> runs = new ConcurrentHashMap<>();
  private final MultiGauge itemsByStatus;
  private final MultiGauge backlogAge;
  private final MultiGauge runUp;
  private final MultiGauge governorRunCap;
  private final MultiGauge governorMode;
  private final Map<String, BudgetView> providers = new ConcurrentHashMap<>();
  private final MultiGauge providerBudget;
  private final MultiGauge providerRate;
  private final MultiGauge providerGranted;
  private final MultiGauge providerInFlight;
  private final MultiGauge providerRunShare;
  private final MultiGauge fleetWanted;
  private final MultiGauge fleetNodes;
  private final MultiGauge verificationItems;
  private final MultiGauge verificationRunning;
  private final Counter runsArchived;
  private final Counter bytesArchived;
  private final Counter rowsDeleted;

  public ApiMetrics() {
    // registered at once: a scrape shows retention's counters at 0 before its first pass
    runsArchived =
        Counter.builder("fencekeeper.retention.runs.archived")
            .description("Ended runs retention archived on this node")
            .register(registry);
    bytesArchived =
        Counter.builder("fencekeeper.retention.archive.bytes")
            .description("Bytes of the archive files retention wrote on this node")
            .register(registry);
    rowsDeleted =
        Counter.builder("fencekeeper.retention.rows.deleted")
            .description("Journal, tag, snapshot and run_item rows retention deleted on this node")
            .register(registry);
    itemsByStatus =
        MultiGauge.builder("fencekeeper.items")
            .description("Items of a run by status")
            .baseUnit("items")
            .register(registry);
    backlogAge =
        MultiGauge.builder("fencekeeper.backlog.age")
            .description("Age of the oldest item of a run that is neither done nor leased")
            .baseUnit("seconds")
            .register(registry);
    runUp =
        MultiGauge.builder("fencekeeper.run.running")
            .description("1 while the run is RUNNING, 0 once it ended")
            .register(registry);
    governorRunCap =
        MultiGauge.builder("fencekeeper.governor.run.cap")
            .description("Items of a run the governor lets be in flight across the cluster")
            .register(registry);
    governorMode =
        MultiGauge.builder("fencekeeper.governor.mode")
            .description("1 for the governor's current decision of a run, 0 for the others")
            .register(registry);
    providerBudget =
        MultiGauge.builder("fencekeeper.provider.budget.in.flight")
            .description("A provider's budget of calls at once: the maximum and what is in force")
            .register(registry);
    providerRate =
        MultiGauge.builder("fencekeeper.provider.budget.rate")
            .description("A provider's budget of calls a second: the maximum and what is in force")
            .register(registry);
    providerGranted =
        MultiGauge.builder("fencekeeper.provider.permits.granted")
            .description("Permits of a provider's budget granted to the nodes' worker pools")
            .register(registry);
    providerInFlight =
        MultiGauge.builder("fencekeeper.provider.calls.in.flight")
            .description("Calls of a provider in flight across the cluster, as the nodes reported")
            .register(registry);
    providerRunShare =
        MultiGauge.builder("fencekeeper.provider.run.share")
            .description("A run's share of its provider's budget (items in flight)")
            .register(registry);
    fleetWanted =
        MultiGauge.builder("fencekeeper.fleet.nodes.wanted")
            .description(
                "Nodes the cluster wants to finish its runs in time (the coordinator's view, the"
                    + " same on every node), with the reason: at_risk, throttled, on_track, idle")
            .register(registry);
    fleetNodes =
        MultiGauge.builder("fencekeeper.fleet.nodes")
            .description("Nodes that dispatch items now (the coordinator's view)")
            .register(registry);
    verificationItems =
        MultiGauge.builder("fencekeeper.verification.items")
            .description(
                "Items of a run's latest verification by outcome: agree, missing, different,"
                    + " unexpected_effect, resolved_applied, resolved_none")
            .baseUnit("items")
            .register(registry);
    verificationRunning =
        MultiGauge.builder("fencekeeper.verification.running")
            .description("1 while a run's latest verification runs, 0 once it ended")
            .register(registry);
  }

  /**
   * Before a scrape: the latest verification of every run (docs/design.md, "Verifying a run"), or
   * the last figures when the keeper does not answer.
   */
  public CompletionStage<Void> refreshVerifications(Verifications verifications) {
    return verifications
        .latestOfEveryRun()
        .handle(
            (views, failure) -> {
              if (failure == null) {
                updateVerifications(views);
              }
              return null;
            });
  }

  void updateVerifications(List<VerificationView> views) {
    List<MultiGauge.Row<?>> itemRows = new ArrayList<>();
    List<MultiGauge.Row<?>> runningRows = new ArrayList<>();
    for (VerificationView view : views) {
      Tags run = Tags.of("run", view.runId());
      var t = view.tally();
      long[] counts = {
        t.agree(),
        t.missing(),
        t.different(),
        t.unexpectedEffect(),
        t.resolvedApplied(),
        t.resolvedNone()
      };
      for (int i = 0; i < OUTCOMES.size(); i++) {
        itemRows.add(MultiGauge.Row.of(run.and("outcome", OUTCOMES.get(i)), counts[i]));
      }
      runningRows.add(
          MultiGauge.Row.of(run, view.status() == VerificationView.Status.RUNNING ? 1 : 0));
    }
    verificationItems.register(itemRows, true);
    verificationRunning.register(runningRows, true);
  }

  private static final List<String> OUTCOMES =
      List.of(
          "agree",
          "missing",
          "different",
          "unexpected_effect",
          "resolved_applied",
          "resolved_none");

  /** Called before each scrape with the budget keeper's view of every provider. */
  public void updateProviders(List<BudgetView> views) {
    List<MultiGauge.Row<?>> budgetRows = new ArrayList<>();
    List<MultiGauge.Row<?>> rateRows = new ArrayList<>();
    List<MultiGauge.Row<?>> grantedRows = new ArrayList<>();
    List<MultiGauge.Row<?>> inFlightRows = new ArrayList<>();
    List<MultiGauge.Row<?>> shareRows = new ArrayList<>();
    for (BudgetView view : views) {
      Tags provider = Tags.of("provider", view.provider());
      boolean first = !providers.containsKey(view.provider());
      providers.put(view.provider(), view);
      if (view.maxInFlight() > 0) {
        budgetRows.add(MultiGauge.Row.of(provider.and("kind", "max"), view.maxInFlight()));
        budgetRows.add(
            MultiGauge.Row.of(provider.and("kind", "effective"), view.effectiveInFlight()));
        grantedRows.add(MultiGauge.Row.of(provider, view.granted()));
      }
      if (view.maxRate() > 0) {
        rateRows.add(MultiGauge.Row.of(provider.and("kind", "max"), view.maxRate()));
        rateRows.add(MultiGauge.Row.of(provider.and("kind", "effective"), view.effectiveRate()));
      }
      inFlightRows.add(MultiGauge.Row.of(provider, view.inFlight()));
      for (BudgetView.Run run : view.runs()) {
        shareRows.add(MultiGauge.Row.of(provider.and("run", run.runId()), run.share()));
      }
      if (first) {
        String name = view.provider();
        FunctionCounter.builder(
                "fencekeeper.provider.budget.throttles",
                providers,
                all -> all.containsKey(name) ? all.get(name).throttling().total() : 0)
            .description("Throttled answers (429 / Retry-After) of a provider, from every caller")
            .tag("provider", name)
            .register(registry);
      }
    }
    providerBudget.register(budgetRows, true);
    providerRate.register(rateRows, true);
    providerGranted.register(grantedRows, true);
    providerInFlight.register(inFlightRows, true);
    providerRunShare.register(shareRows, true);
  }

  /** Called before each scrape with the coordinator's current view of every run. */
  public void updateRuns(List<RunView> views) {
    // a run no longer shown (it ended long ago) leaves the scrape: it never grows with history
    java.util.Set<String> shown = new java.util.HashSet<>();
    views.forEach(view -> shown.add(view.runId()));
    for (String gone : List.copyOf(runs.keySet())) {
      if (!shown.contains(gone)) {
        runs.remove(gone);
        for (String name :
            List.of(
                "fencekeeper.run.throttled.answers",
                "fencekeeper.run.stale.rejections",
                "fencekeeper.run.takeovers",
                "fencekeeper.run.quarantines",
                "fencekeeper.run.reconciliations",
                "fencekeeper.run.attempts")) {
          registry.find(name).tag("run", gone).meters().forEach(registry::remove);
        }
      }
    }
    List<MultiGauge.Row<?>> statusRows = new ArrayList<>();
    List<MultiGauge.Row<?>> ageRows = new ArrayList<>();
    List<MultiGauge.Row<?>> upRows = new ArrayList<>();
    List<MultiGauge.Row<?>> capRows = new ArrayList<>();
    List<MultiGauge.Row<?>> modeRows = new ArrayList<>();
    for (RunView view : views) {
      runs.put(view.runId(), view);
      Tags run = Tags.of("run", view.runId());
      long[] counts = {
        view.counts().pending(),
        view.counts().leased(),
        view.counts().done(),
        view.counts().failed(),
        view.counts().closed(),
        view.counts().quarantined()
      };
      for (int i = 0; i < STATUSES.size(); i++) {
        statusRows.add(MultiGauge.Row.of(run.and("status", STATUSES.get(i)), counts[i]));
      }
      ageRows.add(MultiGauge.Row.of(run, view.backlogAgeSeconds()));
      upRows.add(MultiGauge.Row.of(run, view.state().ended() ? 0 : 1));
      if (view.governor() != null && !view.state().ended()) {
        capRows.add(MultiGauge.Row.of(run, view.governor().cap()));
        for (GovernorPolicy.Mode mode : GovernorPolicy.Mode.values()) {
          modeRows.add(
              MultiGauge.Row.of(
                  run.and("mode", mode.name().toLowerCase(java.util.Locale.ROOT)),
                  view.governor().mode() == mode ? 1 : 0));
        }
      }
      // the run's counters as the run view has them: from its items' journaled events
      runCounter(
          "fencekeeper.run.throttled.answers",
          view.runId(),
          "Throttled provider answers (429 / Retry-After) met by attempts that completed or failed",
          v -> v.throttledAnswers());
      runCounter(
          "fencekeeper.run.stale.rejections",
          view.runId(),
          "Commands refused for a stale token, another worker or a lapsed lease",
          v -> v.staleRejections());
      runCounter(
          "fencekeeper.run.takeovers",
          view.runId(),
          "Claims of an item whose previous holder's lease expired before it finished the item",
          v -> v.takeovers());
      runCounter(
          "fencekeeper.run.quarantines",
          view.runId(),
          "Items of a run quarantined because their holders vanished attempt after attempt",
          v -> v.quarantines());
      runCounter(
          "fencekeeper.run.reconciliations",
          view.runId(),
          "Completions that resolved an ambiguous effect",
          v -> v.reconciliations());
      runCounter(
          "fencekeeper.run.attempts",
          view.runId(),
          "Attempts that ended: DONE items plus attempts failed, released, taken over or closed",
          v -> v.attempts());
    }
    itemsByStatus.register(statusRows, true);
    backlogAge.register(ageRows, true);
    runUp.register(upRows, true);
    governorRunCap.register(capRows, true);
    governorMode.register(modeRows, true);
  }

  /**
   * Called before each scrape with the coordinator's fleet signal: one series of nodes wanted, with
   * the reason of now (an autoscaler reads the value; the reason says why).
   */
  public void updateFleet(FleetView fleet) {
    fleetWanted.register(
        List.of(
            MultiGauge.Row.of(
                Tags.of("reason", fleet.reason().name().toLowerCase(java.util.Locale.ROOT)),
                fleet.wanted())),
        true);
    fleetNodes.register(List.of(MultiGauge.Row.of(Tags.empty(), fleet.nodes())), true);
  }

  private void runCounter(String name, String runId, String help, ToDoubleFunction<RunView> value) {
    FunctionCounter.builder(
            name, runs, all -> all.containsKey(runId) ? value.applyAsDouble(all.get(runId)) : 0)
        .description(help)
        .tag("run", runId)
        .register(registry);
  }

  /** Exposes the governor's caps; {@code current} is read at scrape time. */
  public void governor(Supplier<GovernorSettings> current) {
    Gauge.builder("fencekeeper.governor.cap", () -> current.get().normalCap())
        .description("Cluster-wide worker cap by kind")
        .tag("kind", "normal")
        .register(registry);
    Gauge.builder("fencekeeper.governor.cap", () -> current.get().burstCap())
        .description("Cluster-wide worker cap by kind")
        .tag("kind", "burst")
        .register(registry);
    Gauge.builder("fencekeeper.governor.cap", () -> current.get().minCap())
        .description("Cluster-wide worker cap by kind")
        .tag("kind", "min")
        .register(registry);
  }

  /** The live streams this node holds open now: a slot that never came back shows here. */
  public void eventStreams(java.util.function.IntSupplier open) {
    Gauge.builder("fencekeeper.http.event.streams", open::getAsInt)
        .description("Live event streams open on this node (fencekeeper.http.max-event-streams)")
        .register(registry);
  }

  /** The HTTP API's connections open now. */
  public void httpConnections(java.util.function.IntSupplier open) {
    Gauge.builder("fencekeeper.http.connections", open::getAsInt)
        .description("HTTP API connections open on this node (pekko.http.server.max-connections)")
        .register(registry);
  }

  /** A connection closed at once: its address held its share of the server's connections. */
  public void connectionRefused() {
    Counter.builder("fencekeeper.http.connections.refused")
        .description(
            "HTTP connections closed on accept: their remote address held"
                + " fencekeeper.http.max-connections-per-address already")
        .register(registry)
        .increment();
  }

  public void claim(String source, String outcome) {
    Counter.builder("fencekeeper.claims")
        .description("Claim attempts by source and outcome")
        .tags("source", source, "outcome", outcome)
        .register(registry)
        .increment();
  }

  /** Item command round trip; for a mutating command this is dominated by the journal write. */
  void itemCommand(String command, String outcome, Duration latency) {
    Timer.builder("fencekeeper.item.command")
        .description("Item command latency (ask to reply, including the journal write)")
        .tags("command", command, "outcome", outcome)
        .register(registry)
        .record(latency);
  }

  public void httpRequest(String endpoint, int status) {
    Counter.builder("fencekeeper.http.requests")
        .description("HTTP API requests by endpoint and status")
        .tags("endpoint", endpoint, "status", Integer.toString(status))
        .register(registry)
        .increment();
  }

  @Override
  public void providerCall(String operation, Duration latency, ProviderError error) {
    String outcome = error == null ? "ok" : errorKind(error);
    Timer.builder("fencekeeper.provider.call")
        .description("Provider call latency by operation and outcome")
        .tags("operation", operation, "outcome", outcome)
        .register(registry)
        .record(latency);
    if (error instanceof ProviderError.Throttled) {
      Counter.builder("fencekeeper.provider.throttles")
          .description("Provider answers that asked us to slow down")
          .register(registry)
          .increment();
    } else if (error != null) {
      Counter.builder("fencekeeper.provider.errors")
          .description("Provider errors by kind")
          .tag("kind", outcome)
          .register(registry)
          .increment();
    }
  }

  @Override
  public void runArchived(long bytes) {
    runsArchived.increment();
    bytesArchived.increment(bytes);
  }

  @Override
  public void rowsDeleted(long rows) {
    rowsDeleted.increment(rows);
  }

  @Override
  public void reconciled(boolean found) {
    Counter.builder("fencekeeper.provider.lookups")
        .description("Reconciliation lookups by whether the effect was found")
        .tag("found", Boolean.toString(found))
        .register(registry)
        .increment();
  }

  private static String errorKind(ProviderError error) {
    if (error instanceof ProviderError.Throttled) {
      return "throttled";
    } else if (error instanceof ProviderError.Transient) {
      return "transient";
    } else if (error instanceof ProviderError.Permanent) {
      return "permanent";
    } else if (error instanceof ProviderError.StaleToken) {
      return "stale_token";
    }
    return "ambiguous";
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    return registry.scrape();
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }
}

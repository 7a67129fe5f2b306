package io.fencekeeper.run;

import io.fencekeeper.dispatch.DispatchProtocol;
import io.fencekeeper.dispatch.RunWork;
import io.fencekeeper.provider.budget.RunShare;
import io.fencekeeper.run.governor.FleetPace;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.GovernorPolicy;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.governor.RunGovernor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * One running run as the coordinator steers it (docs/design.md, "Dispatch on every node"): its
 * governor and share of its provider's budget (together its cap), the nodes that dispatch it with
 * the slice each was given and what each last reported, the latest tally of every shard (whichever
 * node sent it), and how the run is stopping. Soft: a coordinator that moves builds it again from
 * the nodes' next reports. No Pekko here but the share's messages: the coordinator wires it.
 */
final class LiveRun {

  /** The node that reported it, when, and what. */
  private record NodeRun(DispatchProtocol.RunReport report, long atNanos) {}

  /** Why the run stops: a reason for the log and the run view, and whether an operator asked. */
  record Stopping(String reason, boolean cancel) {}

  private RunRecord record;
  private final RunGovernor governor;
  private final RunShare share;
  private final Instant startedAt;
  private final Map<String, NodeRun> nodes = new TreeMap<>();
  private final Map<String, Integer> granted = new TreeMap<>();
  // per node, the largest slice it was told since its last report came: until a report shows the
  // slice it applies, it may be filling that one (a shrink reaches it a message later)
  private final Map<String, Integer> toldSinceReport = new TreeMap<>();
  private final Map<Integer, DispatchProtocol.ShardTally> tallies = new HashMap<>();
  private final OrphanPokes pokes = new OrphanPokes();
  private final FleetPace pace = new FleetPace();
  private final Set<Integer> lostLeases = new TreeSet<>();
  private RunItemStore.ShardFigures shards;
  private Stopping stopping;
  private boolean sweeping;
  private boolean ending;
  private boolean counting;

  private final boolean recovered;

  LiveRun(
      RunRecord record, GovernorSettings governor, RunShare share, Instant now, boolean recovered) {
    this.record = record;
    this.recovered = recovered;
    this.governor = new RunGovernor(governor, now);
    this.share = share;
    this.startedAt = now;
  }

  RunRecord record() {
    return record;
  }

  /** Recovered by a coordinator that started while the run was running. */
  boolean recovered() {
    return recovered;
  }

  void record(RunRecord next) {
    record = next;
  }

  String runId() {
    return record.runId();
  }

  RunGovernor governor() {
    return governor;
  }

  RunShare share() {
    return share;
  }

  /** What a node needs to dispatch it. */
  RunWork work() {
    return new RunWork(
        record.runId(),
        record.scopeId(),
        record.request().job(),
        record.request().businessDate(),
        record.itemCount(),
        record.request().maxAttempts(),
        record.request().provider(),
        record.deadline(),
        record.resumes(),
        record.request().maxFailedItems());
  }

  // --- the shards
  // ---------------------------------------------------------------------------------

  void shards(RunItemStore.ShardFigures figures) {
    shards = figures;
  }

  Optional<RunItemStore.ShardFigures> shards() {
    return Optional.ofNullable(shards);
  }

  /** The asks that wake its orphan shards. */
  OrphanPokes pokes() {
    return pokes;
  }

  /**
   * The shards with items still open (as the latest tallies show them) that no node in {@code
   * hostedByLiveNodes} hosts: nobody dispatches them until one does.
   */
  List<Integer> orphans(Set<Integer> hostedByLiveNodes) {
    List<Integer> orphans = new ArrayList<>();
    if (shards == null) {
      return orphans;
    }
    shards
        .totals()
        .forEach(
            (shard, total) -> {
              DispatchProtocol.ShardTally t = tallies.get(shard);
              long ended = t == null ? 0 : t.done() + t.failed() + t.closed() + t.quarantined();
              if (ended < total && !hostedByLiveNodes.contains(shard)) {
                orphans.add(shard);
              }
            });
    return orphans;
  }

  // --- what the nodes report
  // ----------------------------------------------------------------------

  /** A node's report; a report of an older incarnation of the run (before a resume) is ignored. */
  void reported(String node, DispatchProtocol.RunReport report, long nanos) {
    if (report.resumes() != record.resumes()) {
      return;
    }
    nodes.put(node, new NodeRun(report, nanos));
    governor.called(report.calls());
    granted.putIfAbsent(node, report.slice()); // a new coordinator learns what each node holds
    toldSinceReport.put(node, granted.get(node)); // told before the report: counted until the next
    report.shards().forEach(t -> tallies.put(t.shard(), t));
  }

  /**
   * A node left the cluster: it dispatches nothing more; its shards' tallies stay until re-sent.
   * What it last reported in flight are the leases its shards' next hosts take over first.
   */
  void nodeGone(String node) {
    NodeRun last = nodes.remove(node);
    if (last != null) {
      lostLeases.addAll(last.report().inFlightSeqs());
    }
    granted.remove(node);
    toldSinceReport.remove(node);
  }

  /** The items whose leases removed nodes held, until every shard has a live host again. */
  List<Integer> lostLeases() {
    return List.copyOf(lostLeases);
  }

  /** Every shard with open items has a live host: the lost leases are with them now. */
  void orphansAdopted() {
    lostLeases.clear();
  }

  boolean hasReportFrom(String node) {
    return nodes.containsKey(node);
  }

  /**
   * The slice of each node in {@code dispatching} (the nodes that dispatch items now), from the cap
   * in force: the governor's, within the run's share of its provider's budget. A node not heard
   * from yet is taken to want an equal part.
   */
  Map<String, Integer> slices(List<String> dispatching) {
    int cap = share.capOf(governor.cap());
    List<Slices.Node> claims = new ArrayList<>();
    for (String node : dispatching) {
      NodeRun heard = nodes.get(node);
      int demand = heard == null ? cap : heard.report().demand();
      int inFlight = heard == null ? 0 : heard.report().inFlight();
      // the most it may be applying: the slice it reported, or a larger one told since
      int mayApply =
          Math.max(
              heard == null ? 0 : heard.report().slice(),
              toldSinceReport.getOrDefault(node, granted.getOrDefault(node, 0)));
      claims.add(new Slices.Node(node, demand, granted.getOrDefault(node, 0), inFlight, mayApply));
    }
    Map<String, Integer> slices = Slices.split(cap, claims);
    granted.keySet().retainAll(slices.keySet());
    granted.putAll(slices);
    toldSinceReport.keySet().retainAll(slices.keySet());
    slices.forEach((node, slice) -> toldSinceReport.merge(node, slice, Math::max));
    return slices;
  }

  // --- the run's figures
  // --------------------------------------------------------------------------

  private long sum(java.util.function.ToLongFunction<DispatchProtocol.ShardTally> field) {
    return tallies.values().stream().mapToLong(field).sum();
  }

  long failed() {
    return sum(DispatchProtocol.ShardTally::failed);
  }

  /**
   * Every item is DONE or FAILED, as the tallies tell it (the coordinator then counts to be sure).
   */
  boolean settledByTallies() {
    if (shards == null) {
      return false;
    }
    for (var entry : shards.totals().entrySet()) {
      DispatchProtocol.ShardTally t = tallies.get(entry.getKey());
      if (t == null || t.settled() < entry.getValue()) {
        return false;
      }
    }
    return true;
  }

  RunProgress progress(Instant now) {
    long total = record.itemCount();
    long done = Math.min(total, sum(DispatchProtocol.ShardTally::done));
    long failed = sum(DispatchProtocol.ShardTally::failed);
    long closed = sum(DispatchProtocol.ShardTally::closed);
    long quarantined = sum(DispatchProtocol.ShardTally::quarantined);
    long leased = 0;
    double rate = 0;
    double backlog = 0;
    for (NodeRun n : nodes.values()) {
      leased += n.report().inFlight();
      rate += n.report().itemsPerSecond();
      backlog = Math.max(backlog, n.report().backlogAgeSeconds());
    }
    long pending = Math.max(0, total - done - failed - closed - quarantined - leased);
    if (shards == null && nodes.isEmpty()) {
      backlog = java.time.Duration.between(startedAt, now).toMillis() / 1000.0;
    }
    Instant projected =
        pending + leased == 0
            ? now
            : rate > 0 ? now.plusMillis((long) ((pending + leased) / rate * 1000)) : null;
    return new RunProgress(
        new Counts(total, pending, leased, done, failed, closed, quarantined),
        stopping != null ? 0 : backlog,
        rate,
        projected,
        governor.view(),
        FleetPolicy.need(
            load(now, pending + leased, rate, leased), governor.settings().deadlineMargin()),
        stopping == null
            ? null
            : stopping.cancel() ? RunView.CANCELLING : "stopping: " + stopping.reason());
  }

  /** What the fleet's rule reads of the run (docs/cluster.md, "The fleet follows the window"). */
  private FleetPolicy.RunLoad load(Instant now, long remaining, double rate, long leased) {
    // the rate its items in flight give at their best pace of the last seconds (FleetPace)
    double paced = pace.best(System.nanoTime(), rate, leased) * leased;
    return new FleetPolicy.RunLoad(
        record.runId(),
        now,
        record.deadline(),
        // a stopping run takes no more items: it needs nothing of the fleet
        stopping != null ? 0 : remaining,
        paced,
        (int) Math.min(Integer.MAX_VALUE, leased),
        governor.settings().burstCap(),
        share.budgetInFlight(),
        governor.decision().mode() == GovernorPolicy.Mode.THROTTLED
            || governor.throttledLately(now));
  }

  /** Decides the governor's cap from the run's figures; a decision worth logging is returned. */
  Optional<GovernorPolicy.Decision> steer(Instant now) {
    RunProgress p = progress(now);
    Optional<GovernorPolicy.Decision> decision =
        governor.decide(
            now,
            record.deadline(),
            p.counts().pending() + p.counts().leased(),
            p.itemsPerSecond(),
            p.backlogAgeSeconds());
    share.report(
        (int) Math.min(governor.cap(), p.counts().pending() + p.counts().leased()),
        governor.decision().mode() == GovernorPolicy.Mode.BURST,
        System.nanoTime());
    return decision;
  }

  // --- stopping and ending
  // ------------------------------------------------------------------------

  Stopping stopping() {
    return stopping;
  }

  /** Begins to stop; false when it already was. */
  boolean stop(Stopping why) {
    if (stopping != null) {
      return false;
    }
    stopping = why;
    return true;
  }

  boolean sweeping() {
    return sweeping;
  }

  void sweeping(boolean now) {
    sweeping = now;
  }

  /** The final count is being read: nothing else starts the end again. */
  boolean beginCount() {
    if (counting || ending) {
      return false;
    }
    counting = true;
    return true;
  }

  void countFailed() {
    counting = false;
  }

  /** The run's end is being written; false when it already was. */
  boolean beginEnd() {
    counting = false;
    if (ending) {
      return false;
    }
    ending = true;
    return true;
  }

  /** Nodes whose last report is older than {@code beforeNanos} and that {@code gone} removes. */
  void forgetNodes(Predicate<String> gone) {
    new ArrayList<>(nodes.keySet()).stream().filter(gone).forEach(this::nodeGone);
  }
}

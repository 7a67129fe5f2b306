package io.fencekeeper.run;

import io.fencekeeper.dispatch.DispatchProtocol;
import io.fencekeeper.dispatch.DispatchProtocol.ToAgent;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.provider.budget.RunShare;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.FleetView;
import io.fencekeeper.run.governor.GovernorSettings;
import io.fencekeeper.run.governor.GovernorView;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * The coordinator's running runs and the nodes that dispatch them (docs/design.md, "Dispatch on
 * every node"): once a second each node gets one {@link DispatchProtocol.Assignments} with every
 * run and its slice; each node's reports feed the runs' tallies; shards with open items that no
 * live node hosts are woken; a run that stops gets its {@link CloseSweep}; a run that looks settled
 * is counted in {@code run_item}. The coordinator persists; this class carries the soft state.
 */
final class LiveRuns {

  /**
   * A coordinator that starts (a move, a restart) learns what each node holds from its reports
   * before it hands out slices; after this long, a node it has not heard from holds nothing of the
   * run.
   */
  static final Duration LEARN_FOR = Duration.ofSeconds(3);

  /**
   * How long a removed member's late word is ignored: far longer than a report or a listing takes
   * to arrive, short enough that the set never grows with the cluster's history.
   */
  static final Duration REMEMBER_REMOVED = Duration.ofMinutes(10);

  /** A node whose dispatcher of a run failed this often ends the run FAILED. */
  static final int MAX_FAILURES = 3;

  /**
   * What the coordinator knows of a node from its last report: the item shards it hosts and the
   * workers it runs.
   */
  private record NodeView(Set<Integer> hosted, int workers) {}

  private final ActorContext<RunCoordinator.Command> ctx;
  private final RunCoordinator.Dependencies deps;
  private final ActorRef<DispatchProtocol.NodeReport> reportTo;
  private final ActorRef<BudgetKeeper.Share> shares;
  private final Address self;
  private final Map<String, LiveRun> runs = new TreeMap<>();
  private final Map<String, ActorRef<ToAgent>> agents = new TreeMap<>();
  private final Map<String, NodeView> nodes = new HashMap<>();
  // members removed lately, and when: their late reports and listings are not heeded
  private final Map<Address, Long> removedAt = new HashMap<>();
  // nodes told there is no run, since their last run
  private final Set<String> toldIdle = new HashSet<>();
  private final long bornNanos = System.nanoTime();
  // the fleet's last signal, logged when it changes
  private FleetView fleet;

  LiveRuns(
      ActorContext<RunCoordinator.Command> ctx,
      RunCoordinator.Dependencies deps,
      ActorRef<DispatchProtocol.NodeReport> reportTo,
      ActorRef<BudgetKeeper.Share> shares) {
    this.ctx = ctx;
    this.deps = deps;
    this.reportTo = reportTo;
    this.shares = shares;
    this.self = Cluster.get(ctx.getSystem()).selfMember().address();
  }

  /** A node by its address: the same name for a local and a remote reference to its agent. */
  private String nodeOf(ActorRef<?> agent) {
    return addressOf(agent).toString();
  }

  private Address addressOf(ActorRef<?> agent) {
    Address address = agent.path().address();
    return address.hasLocalScope() ? self : address;
  }

  /**
   * Whether the agent's node was removed from the cluster and has not joined again (a node started
   * again on the same address is a member anew): a report that arrives after the removal, or a
   * receptionist's listing that still names the node, must not bring it back, or it would hold a
   * slice of every run and count among the fleet's nodes.
   */
  private boolean removedNode(ActorRef<?> agent) {
    Address address = addressOf(agent);
    if (!removedAt.containsKey(address)) {
      return false;
    }
    for (Member member : Cluster.get(ctx.getSystem()).state().getMembers()) {
      if (member.address().equals(address)) {
        removedAt.remove(address);
        return false;
      }
    }
    return true;
  }

  // --- runs come and go
  // ---------------------------------------------------------------------------

  /**
   * Starts steering a running run: created or resumed, or {@code recovered} by a coordinator that
   * starts (it learns what the nodes hold before it changes their slices).
   */
  void start(RunRecord run, GovernorSettings governor, boolean recovered) {
    LiveRun previous = runs.remove(run.runId());
    if (previous != null) {
      previous.share().leave();
    }
    RunShare share =
        new RunShare(run.request().providerName(), run.runId(), deps.budgets(), shares);
    LiveRun live = new LiveRun(run, governor, share, deps.clock().instant(), recovered);
    runs.put(run.runId(), live);
    countShards(live);
    assign();
  }

  /** Reads how many items each shard has (and fills in shards a run staged before they existed). */
  private void countShards(LiveRun live) {
    RunRecord run = live.record();
    CompletableFuture.supplyAsync(
            () -> {
              deps.store()
                  .fillMissingShards(
                      run.scopeId(),
                      row -> deps.shards().shardNumber(run.itemId(row.accountId(), row.cursor())));
              return deps.store().shardFigures(run.scopeId());
            },
            deps.blocking())
        .whenComplete(
            (figures, failure) ->
                ctx.getSelf()
                    .tell(
                        new RunCoordinator.ShardsCounted(
                            run.runId(), run.resumes(), figures, failure)));
  }

  void shardsCounted(RunCoordinator.ShardsCounted counted) {
    LiveRun live = runs.get(counted.runId());
    if (live == null || live.record().resumes() != counted.resumes()) {
      return;
    }
    if (counted.failure() != null) {
      ctx.getLog()
          .warn(
              "run {}: counting its shards failed, retrying: {}", live.runId(), counted.failure());
      countShards(live);
      return;
    }
    live.shards(counted.figures());
    pokeOrphans(live);
  }

  void ended(String runId) {
    LiveRun live = runs.remove(runId);
    if (live != null) {
      live.share().leave();
    }
    assign();
    watchFleet();
  }

  /** No run is steered. */
  boolean isEmpty() {
    return runs.isEmpty();
  }

  Optional<LiveRun> get(String runId) {
    return Optional.ofNullable(runs.get(runId));
  }

  Optional<RunProgress> progressOf(String runId) {
    return get(runId).map(live -> live.progress(deps.clock().instant()));
  }

  Map<String, GovernorView> governors() {
    Map<String, GovernorView> views = new TreeMap<>();
    runs.forEach((id, live) -> views.put(id, live.governor().view()));
    return views;
  }

  /**
   * The nodes the fleet wants now (docs/cluster.md, "The fleet follows the window"), from every
   * running run's load; computed when asked, and once a second while runs are steered.
   */
  FleetView fleet() {
    Instant now = deps.clock().instant();
    // each run's progress carries its need: computed once, the same the run view shows
    List<FleetPolicy.Need> needs = new ArrayList<>();
    runs.values().forEach(live -> needs.add(live.progress(now).fleet()));
    FleetPolicy.Settings settings = deps.fleet().withWorkersPerNode(workersPerNode());
    return FleetView.of(now, agents.size(), settings, FleetPolicy.fromNeeds(settings, needs));
  }

  /**
   * The fewest workers a dispatching node reports (0 = it serves only external workers): the signal
   * asks for too many nodes rather than too few. A coordinator that has heard no node yet takes its
   * own node's setting.
   */
  private int workersPerNode() {
    return agents.keySet().stream()
        .map(nodes::get)
        .filter(view -> view != null && view.workers() > 0)
        .mapToInt(NodeView::workers)
        .min()
        .orElse(deps.fleet().workersPerNode());
  }

  /**
   * Logs the signal when the nodes wanted change, or a run's deadline comes at risk or its provider
   * throttles it, or that ends: an operator reads why nodes came and went. A run that starts or
   * ends without changing the nodes wanted (IDLE and ON_TRACK) is not news.
   */
  private void watchFleet() {
    FleetView now = fleet();
    // before its first signal, a coordinator takes the fleet to have been idle at its minimum
    int wantedBefore = fleet == null ? deps.fleet().minNodes() : fleet.wanted();
    FleetPolicy.Reason reasonBefore = fleet == null ? FleetPolicy.Reason.IDLE : fleet.reason();
    boolean news =
        wantedBefore != now.wanted()
            || (reasonBefore != now.reason() && (alarming(reasonBefore) || alarming(now.reason())));
    if (news) {
      ctx.getLog()
          .info(
              "fleet: {} nodes wanted, {} dispatching ({}): {}",
              now.wanted(),
              now.nodes(),
              now.reason(),
              now.detail());
    }
    fleet = now;
  }

  private static boolean alarming(FleetPolicy.Reason reason) {
    return reason == FleetPolicy.Reason.AT_RISK || reason == FleetPolicy.Reason.THROTTLED;
  }

  void changeGovernor(GovernorSettings settings) {
    Instant now = deps.clock().instant();
    runs.values().forEach(live -> logDecision(live, live.governor().change(settings, now)));
    assign();
  }

  /**
   * The journal's signals the governor reads: quarantines, stale rejections and takeovers. Not the
   * throttled answers: the governor reads those as a share of the run's calls, which the nodes
   * report as the calls end (the journal counts them only when an attempt ends).
   */
  void signalsSeen(String runId, RunSignals delta) {
    LiveRun live = runs.get(runId);
    if (live == null) {
      return;
    }
    if (delta.quarantines() > 0) {
      live.governor().quarantined(deps.clock().instant());
    }
    live.governor().stale(delta.staleRejections() + delta.takeovers());
  }

  void shareGranted(BudgetKeeper.Share share) {
    LiveRun live = runs.get(share.runId());
    if (live != null) {
      live.share().granted(share);
    }
  }

  // --- stopping
  // -----------------------------------------------------------------------------------

  /** The run stops: no node hands out more, and what is open is closed. */
  void stop(String runId, LiveRun.Stopping why) {
    LiveRun live = runs.get(runId);
    if (live == null || !live.stop(why)) {
      return;
    }
    ctx.getLog().info("run {}: stopping ({})", runId, why.reason());
    assign();
    sweep(live);
  }

  private void sweep(LiveRun live) {
    live.sweeping(true);
    RunRecord run = live.record();
    String reason =
        live.stopping().cancel() ? "cancelled" : "deadline: " + live.stopping().reason();
    ctx.spawn(
        CloseSweep.create(
            run,
            reason,
            new CloseSweep.Dependencies(deps.store(), deps.items(), deps.blocking()),
            ctx.getSelf()),
        "close-sweep-"
            + URLEncoder.encode(run.runId(), StandardCharsets.UTF_8)
            + "-"
            + run.resumes()
            + "-"
            + System.nanoTime());
  }

  /** The sweep closed what was open: the run's items are counted for its end. */
  void sweepFinished(String runId, int resumes) {
    LiveRun live = runs.get(runId);
    if (live != null && live.record().resumes() == resumes) {
      live.sweeping(false);
      count(live);
    }
  }

  // --- the nodes' reports
  // -------------------------------------------------------------------------

  /** Every node that hosts item shards runs an agent; one that is gone holds nothing any more. */
  void agents(Set<ActorRef<ToAgent>> listing) {
    Map<String, ActorRef<ToAgent>> now = new TreeMap<>();
    listing.stream()
        .filter(agent -> !removedNode(agent))
        .forEach(agent -> now.put(nodeOf(agent), agent));
    new HashSet<>(agents.keySet())
        .stream().filter(node -> !now.containsKey(node)).forEach(this::gone);
    agents.clear();
    agents.putAll(now);
    assign();
  }

  /**
   * A member left the cluster (removed: the split-brain resolver downed it, or it left): it holds
   * no slice any more, and the shards it hosted are woken at once on the nodes that remain.
   */
  void removed(Address member) {
    long now = System.nanoTime();
    removedAt.values().removeIf(at -> now - at > REMEMBER_REMOVED.toNanos());
    removedAt.put(member, now);
    String node = member.toString();
    if (agents.remove(node) != null || nodes.containsKey(node)) {
      gone(node);
      runs.values().forEach(live -> live.pokes().forget());
      runs.values().forEach(this::pokeOrphans);
      assign();
    }
  }

  private void gone(String node) {
    nodes.remove(node);
    runs.values().forEach(live -> live.nodeGone(node));
  }

  void reported(DispatchProtocol.NodeReport report) {
    if (removedNode(report.agent())) {
      return; // what it held is the runs' lost leases already
    }
    String node = nodeOf(report.agent());
    agents.putIfAbsent(node, report.agent());
    nodes.put(node, new NodeView(Set.copyOf(report.hostedShards()), report.workers()));
    long now = System.nanoTime();
    for (DispatchProtocol.RunReport run : report.runs()) {
      LiveRun live = runs.get(run.runId());
      if (live == null) {
        continue;
      }
      live.reported(node, run, now);
      checkFailures(live);
      if (live.stopping() == null && live.settledByTallies()) {
        count(live);
      }
    }
    for (DispatchProtocol.DispatchFailure failure : report.failures()) {
      LiveRun live = runs.get(failure.runId());
      if (live != null
          && failure.resumes() == live.record().resumes()
          && failure.count() >= MAX_FAILURES) {
        ctx.getSelf()
            .tell(
                new RunCoordinator.DispatchFailed(
                    failure.runId(),
                    "the dispatcher failed "
                        + failure.count()
                        + " times on "
                        + node
                        + "; the last failure: "
                        + failure.cause()));
      }
    }
  }

  /** More items failed than the run allows: it stops dispatching at once. */
  private void checkFailures(LiveRun live) {
    long failed = live.failed();
    int allowed = live.record().request().maxFailedItems();
    if (live.stopping() == null && failed > allowed) {
      stop(
          live.runId(),
          new LiveRun.Stopping(
              failed + " items failed, more than maxFailedItems " + allowed, false));
    }
  }

  /**
   * Counts the run's items in {@code run_item} (the nodes wrote every status their tallies count
   * before they reported them): each item once, wherever its shard was.
   */
  private void count(LiveRun live) {
    if (!live.beginCount()) {
      return;
    }
    RunRecord run = live.record();
    CompletableFuture.supplyAsync(() -> deps.store().statusCounts(run.scopeId()), deps.blocking())
        .whenComplete(
            (counts, failure) ->
                ctx.getSelf()
                    .tell(
                        new RunCoordinator.ItemsCounted(
                            run.runId(), run.resumes(), counts, failure)));
  }

  // --- the second's work
  // --------------------------------------------------------------------------

  /** The governors decide, every node learns its slices, and shards nobody hosts are woken. */
  void tick() {
    Instant now = deps.clock().instant();
    for (LiveRun live : runs.values()) {
      if (live.stopping() == null) {
        live.steer(now).ifPresent(decision -> logDecision(live, decision));
        pokeOrphans(live);
      } else if (!live.sweeping()) {
        count(live); // a count that failed: try the end again
      }
    }
    assign();
    watchFleet();
  }

  private void logDecision(LiveRun live, io.fencekeeper.run.governor.GovernorPolicy.Decision d) {
    ctx.getLog()
        .info("run {}: governor {} cap {}: {}", live.runId(), d.mode(), d.cap(), d.reason());
  }

  /** One message per node: every run with the node's slice of it. */
  private void assign() {
    boolean learning = System.nanoTime() - bornNanos < LEARN_FOR.toNanos();
    // every node that hosts item shards dispatches them (to its pool, or to others' steals)
    List<String> dispatching = new ArrayList<>(agents.keySet());
    Map<String, List<DispatchProtocol.Assignment>> byNode = new TreeMap<>();
    agents.keySet().forEach(node -> byNode.put(node, new ArrayList<>()));
    for (LiveRun live : runs.values()) {
      boolean heardAll = dispatching.stream().allMatch(live::hasReportFrom);
      // a coordinator that just started: the nodes keep their slices until it knows them
      Map<String, Integer> slices =
          live.recovered() && learning && !heardAll ? Map.of() : live.slices(dispatching);
      for (String node : agents.keySet()) {
        byNode
            .get(node)
            .add(
                new DispatchProtocol.Assignment(
                    live.work(),
                    slices.getOrDefault(node, DispatchProtocol.KEEP_SLICE),
                    live.stopping() != null,
                    live.lostLeases()));
      }
    }
    byNode.forEach(
        (node, assignments) -> {
          // an idle cluster exchanges nothing: a node hears "no runs" once, after its last run
          if (!assignments.isEmpty() || !toldIdle.contains(node)) {
            agents.get(node).tell(new DispatchProtocol.Assignments(assignments, reportTo));
          }
          if (assignments.isEmpty()) {
            toldIdle.add(node);
          } else {
            toldIdle.remove(node);
          }
        });
  }

  /**
   * Wakes the shards with open items that no live node hosts (never allocated yet, or their node
   * was removed): asking one of their items allocates the shard on some node, whose dispatcher then
   * pages it. Checked every second until a node reports hosting it, and at once when a member is
   * removed; {@link OrphanPokes} says which to ask: never one whose ask is still on its way.
   */
  private void pokeOrphans(LiveRun live) {
    Set<Integer> hosted = new HashSet<>();
    agents.keySet().stream()
        .map(nodes::get)
        .filter(view -> view != null)
        .forEach(view -> hosted.addAll(view.hosted()));
    var figures = live.shards();
    if (figures.isEmpty()) {
      return;
    }
    List<Integer> orphans = live.orphans(hosted);
    if (orphans.isEmpty()) {
      live.orphansAdopted();
    }
    for (int shard : live.pokes().due(orphans, deps.clock().instant())) {
      var first = figures.get().firstItems().get(shard);
      if (first != null) {
        ItemId item = live.record().itemId(first.accountId(), first.cursor());
        live.pokes().asked(shard, deps.items().get(item).toCompletableFuture());
      }
    }
  }
}

package io.fencekeeper.provider.budget;

import io.fencekeeper.provider.budget.BudgetKeeper.Grant;
import io.fencekeeper.provider.budget.BudgetKeeper.Share;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keeper's books for one provider (docs/design.md, "Provider budgets"): the effective budget
 * under throttling, the permits each node holds and until when, each run's demand, the throttled
 * answers, and the log of decisions. No actor: the {@link BudgetKeeper} feeds it what nodes and
 * dispatchers report and sends what it answers, so the accounting is tested without a cluster.
 *
 * <p>The one invariant: the permits (and calls a second) nodes may be using add up to at most the
 * effective budget, and never to more than the budget. A node may be using what it reported holding
 * (its grant, or more while a grant that shrank drains), or any grant sent to it since the one its
 * report acknowledges: every grant carries a version, every report the version it covers. Permits
 * are only granted out of what nobody may be using; a grant that shrinks is pushed at once, a grant
 * that grows waits for the room.
 *
 * <p>Time is the keeper's {@code System.nanoTime}: a node's lease runs out here {@code lease +
 * margin} after the keeper handled its renewal, while the node itself stops starting calls {@code
 * lease - callTimeout} after it sent the renewal; the node always stops first.
 */
final class BudgetBook {

  private static final Logger log = LoggerFactory.getLogger(BudgetBook.class);

  /** How many decisions the view keeps. */
  static final int CHANGES_KEPT = 50;

  /** Beyond the lease, before the keeper hands a silent node's permits to others. */
  static final Duration EXPIRY_MARGIN = Duration.ofSeconds(1);

  /**
   * A node's demand is the most it reported over this long: it rises at once and falls slowly, so
   * that grants (and rate slots, idle for a second when they move) do not follow every item that
   * comes and goes.
   */
  static final Duration DEMAND_MEMORY = Duration.ofSeconds(3);

  /** A run that has not reported for this long is gone (its dispatcher reports every second). */
  static final Duration RUN_SILENCE = Duration.ofSeconds(5);

  /** What a node's pool reports when it renews (see {@link PermitPool#report()}). */
  record Report(
      String node,
      long seq,
      long ackEpoch,
      long ackVersion,
      int holding,
      int rateHolding,
      int inFlight,
      int demand,
      long calls,
      int throttled,
      long retryAfterMillis) {}

  /** A grant to send: to the holder that renewed (a reply), or pushed to another. */
  record Outgoing(String holderId, Grant grant) {}

  /** A grant sent to a node that its reports have not acknowledged yet. */
  private record Sent(long version, int permits, int rate) {}

  private static final class Holder {
    final String node;
    int granted;
    int rate;
    long version;
    final ArrayDeque<Sent> unacknowledged = new ArrayDeque<>();
    int holding;
    int rateHolding;
    int inFlight;
    int demand;
    long renewedAt;
    final ArrayDeque<long[]> demands = new ArrayDeque<>();

    Holder(String node) {
      this.node = node;
    }

    /** The most this node reported wanting within the demand memory. */
    void reported(int demandNow, long nowNanos) {
      demands.addLast(new long[] {nowNanos, demandNow});
      while (nowNanos - demands.peekFirst()[0] >= DEMAND_MEMORY.toNanos()) {
        demands.pollFirst();
      }
      demand = demands.stream().mapToInt(d -> (int) d[1]).max().orElse(demandNow);
    }

    /** What the node may be using: its report, and every grant sent since the one it covers. */
    int mayHold() {
      int most = Math.max(granted, holding);
      for (Sent sent : unacknowledged) {
        most = Math.max(most, sent.permits());
      }
      return most;
    }

    int mayHoldRate() {
      int most = Math.max(rate, rateHolding);
      for (Sent sent : unacknowledged) {
        most = Math.max(most, sent.rate());
      }
      return most;
    }

    void acknowledged(long epoch, long ackEpoch, long ackVersion) {
      if (epoch == ackEpoch) {
        unacknowledged.removeIf(sent -> sent.version() <= ackVersion);
      }
    }
  }

  private record RunClaim(int demand, boolean burst, long reportedAt) {}

  private final String provider;
  private final long epoch;
  private long versions;
  private final Duration lease;
  private final Duration cooldown;
  private ProviderBudget budget;
  private String source;
  private BudgetPolicy.Aimd aimd;
  private final Map<String, Holder> holders = new TreeMap<>();
  private final Map<String, RunClaim> runs = new TreeMap<>();
  private boolean recovering;
  private long recoveryStartedAt;
  private final Set<String> heardFrom = new HashSet<>();
  private final ArrayDeque<BudgetView.Change> changes = new ArrayDeque<>();
  private final ArrayDeque<long[]> throttledAt = new ArrayDeque<>();
  // every node's calls over the last seconds, the share throttled decides (ThrottleShare)
  private final ThrottleShare.Window calls = new ThrottleShare.Window();
  private long throttledTotal;
  private Instant lastThrottledAt;
  private long lastRetryAfterMillis;

  /** {@code epoch}: this keeper incarnation, so that a node's acknowledgement names its grants. */
  BudgetBook(
      String provider,
      long epoch,
      ProviderBudget budget,
      String source,
      Duration lease,
      Duration cooldown,
      long nowNanos,
      Instant now) {
    this.provider = provider;
    this.epoch = epoch;
    this.lease = lease;
    this.cooldown = cooldown;
    this.budget = budget;
    this.source = source;
    this.aimd = BudgetPolicy.Aimd.full(budget);
    if (budget.limited()) {
      // a keeper that starts does not know what the previous one granted: see startRecovery
      startRecovery(nowNanos);
      record(now, "keeper started with a budget of " + budget + " (" + source + ")");
    }
  }

  String provider() {
    return provider;
  }

  ProviderBudget budget() {
    return budget;
  }

  String source() {
    return source;
  }

  Set<String> holderIds() {
    return holders.keySet();
  }

  /**
   * Until every member has reported (or a lease has passed), a node gets no more than it says it
   * holds: the permits an earlier keeper granted are still out there, and only their holders know
   * them. A member's report counts; a member that was removed stopped its pool before the keeper
   * could move (the Split Brain Resolver's removal margin, as for every singleton).
   */
  private void startRecovery(long nowNanos) {
    recovering = true;
    recoveryStartedAt = nowNanos;
    heardFrom.clear();
  }

  // --- what nodes and runs report ----------------------------------------------------------------

  /** A node's pool renews its lease: the answer to it, and pushes to nodes whose grant changed. */
  List<Outgoing> renew(String holderId, Report report, long nowNanos, Instant now) {
    Holder holder = holders.computeIfAbsent(holderId, id -> new Holder(report.node()));
    holder.acknowledged(epoch, report.ackEpoch(), report.ackVersion());
    holder.holding = report.holding();
    holder.rateHolding = report.rateHolding();
    holder.inFlight = report.inFlight();
    holder.reported(report.demand(), nowNanos);
    holder.renewedAt = nowNanos;
    heardFrom.add(report.node());
    calls.add(
        nowNanos,
        new ThrottleShare.Calls(report.calls(), report.throttled(), report.retryAfterMillis()));
    if (report.throttled() > 0) {
      throttled(report, nowNanos, now);
    }
    Set<String> changed = rebalance();
    changed.remove(holderId);
    List<Outgoing> out = new ArrayList<>();
    out.add(new Outgoing(holderId, grantOf(holder, report.seq())));
    changed.forEach(id -> out.add(new Outgoing(id, grantOf(holders.get(id), -1))));
    return out;
  }

  /**
   * Throttled answers seen by any caller: when their share of every caller's calls says the
   * provider limits its callers, every caller slows (AIMD on the effective budget).
   */
  private void throttled(Report report, long nowNanos, Instant now) {
    throttledTotal += report.throttled();
    throttledAt.addLast(new long[] {nowNanos, report.throttled()});
    lastThrottledAt = now;
    lastRetryAfterMillis = report.retryAfterMillis();
    decide(nowNanos, now, " (the last reported by " + report.node() + ")");
  }

  /** A run's dispatcher reports its demand every second and learns its share. */
  Share reportRun(String runId, int demand, boolean burst, long nowNanos) {
    runs.put(runId, new RunClaim(demand, burst, nowNanos));
    if (!budget.limited()) {
      return new Share(provider, runId, false, 0, 0);
    }
    return new Share(provider, runId, true, runShares().get(runId), aimd.effective());
  }

  void leaveRun(String runId) {
    runs.remove(runId);
  }

  /**
   * Weighted max-min fair shares of the effective budget between the runs (see {@link
   * FairSplit#weighted}): equal while nobody's deadline is at risk; a run in BURST counts {@link
   * FairSplit#BURST_WEIGHT} times, so it borrows from the runs that are not.
   */
  private Map<String, Integer> runShares() {
    List<FairSplit.Claim> claims = new ArrayList<>();
    runs.forEach(
        (id, claim) ->
            claims.add(
                new FairSplit.Claim(
                    id, claim.demand(), claim.burst() ? FairSplit.BURST_WEIGHT : 1)));
    return FairSplit.weighted(aimd.effective(), claims);
  }

  // --- time: leases, silent runs, recovery, additive increase ------------------------------------

  /** Every tick: leases that ran out, runs gone silent, the end of recovery, one step up. */
  List<Outgoing> tick(long nowNanos, Instant now, Set<String> upMembers) {
    long expiry = lease.plus(EXPIRY_MARGIN).toNanos();
    var expired = holders.entrySet().iterator();
    while (expired.hasNext()) {
      var entry = expired.next();
      Holder h = entry.getValue();
      if (nowNanos - h.renewedAt >= expiry) {
        expired.remove();
        if (budget.limited()) {
          record(
              now,
              h.node
                  + " did not renew its lease of "
                  + h.granted
                  + " permits"
                  + (h.rate > 0 ? " (" + h.rate + " calls/s)" : "")
                  + " within "
                  + lease.toMillis()
                  + " ms: they are back in the budget");
        }
      }
    }
    runs.values().removeIf(run -> nowNanos - run.reportedAt() >= RUN_SILENCE.toNanos());
    while (!throttledAt.isEmpty() && nowNanos - throttledAt.peekFirst()[0] >= 60_000_000_000L) {
      throttledAt.pollFirst();
    }
    if (recovering) {
      boolean allReported = !upMembers.isEmpty() && heardFrom.containsAll(upMembers);
      if (allReported || nowNanos - recoveryStartedAt >= expiry) {
        recovering = false;
        record(
            now,
            "recovery over: "
                + (allReported
                    ? "every member reported what it holds"
                    : "a permit lease has passed"));
      }
    }
    decide(nowNanos, now, "");
    return pushes(rebalance());
  }

  // --- operator ----------------------------------------------------------------------------------

  /** A new budget from an operator ({@code PUT /api/providers/{name}}, journaled by the keeper). */
  List<Outgoing> set(ProviderBudget next, String nextSource, long nowNanos, Instant now) {
    boolean wasLimited = budget.limited();
    budget = next;
    source = nextSource;
    // the operator's word is the budget in force; throttling may halve it again
    aimd = new BudgetPolicy.Aimd(next.maxInFlight(), aimd.lastDecrease(), null);
    if (next.limited() && !wasLimited) {
      // the nodes' calls in flight were never counted: learn them before granting any more
      holders.values().forEach(h -> h.granted = 0);
      startRecovery(nowNanos);
    }
    record(now, "budget set to " + next + " by " + nextSource);
    Set<String> changed = rebalance();
    if (next.limited() && !wasLimited) {
      // an idle node's grant stays 0, so rebalancing finds nothing to send it; but it must learn
      // now that its calls need permits, not at its next renewal a quarter lease away
      holders.keySet().stream().filter(changed::add).forEach(this::newVersion);
    }
    return pushes(changed);
  }

  // --- sharing out -------------------------------------------------------------------------------

  private void decide(long nowNanos, Instant now, String suffix) {
    BudgetPolicy.Decision decision =
        BudgetPolicy.decide(
            budget, aimd, new BudgetPolicy.Signals(now, calls.sum(nowNanos)), cooldown);
    int before = aimd.effective();
    aimd = decision.next();
    if (aimd.effective() != before) {
      // what the change does is read afresh, not mixed with the calls made before it
      calls.clear();
    }
    if (decision.changed()) {
      record(now, decision.reason() + (aimd.decreasedAt(now) ? suffix : ""));
    }
  }

  /**
   * Targets: max-min by node demand, the rest spread over the nodes that want any, and the calls a
   * second in proportion to the permits. Shrinks first; then growth, only out of what nobody may be
   * using. Returns the holders whose grant changed.
   */
  private Set<String> rebalance() {
    Set<String> changed = new LinkedHashSet<>();
    if (!budget.limited()) {
      return changed;
    }
    int effective = aimd.effective();
    int effectiveRate = budget.rateAt(effective);
    List<FairSplit.Claim> claims = new ArrayList<>();
    holders.forEach((id, h) -> claims.add(FairSplit.Claim.of(id, h.demand)));
    Map<String, Integer> targets = FairSplit.withSurplus(effective, claims);
    Map<String, Integer> rateTargets = FairSplit.proportional(effectiveRate, targets);
    if (recovering) {
      holders.forEach(
          (id, h) -> {
            targets.put(id, Math.min(targets.get(id), h.mayHold()));
            rateTargets.put(id, Math.min(rateTargets.get(id), h.mayHoldRate()));
          });
    }
    holders.forEach(
        (id, h) -> {
          if (h.granted > targets.get(id)) {
            h.granted = targets.get(id);
            changed.add(id);
          }
          if (h.rate > rateTargets.get(id)) {
            h.rate = rateTargets.get(id);
            changed.add(id);
          }
        });
    int used = 0;
    int usedRate = 0;
    for (Holder h : holders.values()) {
      used += h.mayHold();
      usedRate += h.mayHoldRate();
    }
    for (Map.Entry<String, Holder> entry : holders.entrySet()) {
      Holder h = entry.getValue();
      int target = targets.get(entry.getKey());
      if (h.granted < target) {
        int before = h.mayHold();
        int next = Math.min(target, before + Math.max(0, effective - used));
        if (next > h.granted) {
          used += Math.max(next, before) - before;
          h.granted = next;
          changed.add(entry.getKey());
        }
      }
      int rateTarget = rateTargets.get(entry.getKey());
      if (h.rate < rateTarget) {
        int before = h.mayHoldRate();
        int next = Math.min(rateTarget, before + Math.max(0, effectiveRate - usedRate));
        if (next > h.rate) {
          usedRate += Math.max(next, before) - before;
          h.rate = next;
          changed.add(entry.getKey());
        }
      }
    }
    changed.forEach(this::newVersion);
    return changed;
  }

  /** A holder's grant is to be sent again: a new version, counted until the node acknowledges. */
  private void newVersion(String id) {
    Holder h = holders.get(id);
    h.version = ++versions;
    h.unacknowledged.addLast(new Sent(h.version, h.granted, h.rate));
  }

  private List<Outgoing> pushes(Set<String> changed) {
    return changed.stream().map(id -> new Outgoing(id, grantOf(holders.get(id), -1))).toList();
  }

  private Grant grantOf(Holder h, long replyTo) {
    if (!budget.limited()) {
      return new Grant(provider, false, 0, -1, lease, replyTo, epoch, h.version);
    }
    // -1: no rate limit at all; 0 is a node that may not start a call this second
    return new Grant(
        provider,
        true,
        h.granted,
        budget.maxRate() > 0 ? h.rate : -1,
        lease,
        replyTo,
        epoch,
        h.version);
  }

  // --- what operators see ------------------------------------------------------------------------

  private void record(Instant now, String reason) {
    BudgetView.Change change =
        new BudgetView.Change(now, aimd.effective(), budget.rateAt(aimd.effective()), reason);
    changes.addLast(change);
    while (changes.size() > CHANGES_KEPT) {
      changes.pollFirst();
    }
    log.info(
        "provider {}: budget {} in flight{}: {}",
        provider,
        change.effectiveInFlight(),
        change.effectiveRate() > 0 ? ", " + change.effectiveRate() + " calls/s" : "",
        reason);
  }

  BudgetView view(long nowNanos) {
    List<BudgetView.Node> nodes = new ArrayList<>();
    int granted = 0;
    int inFlight = 0;
    for (Holder h : holders.values()) {
      long left = lease.toMillis() - (nowNanos - h.renewedAt) / 1_000_000;
      nodes.add(
          new BudgetView.Node(
              h.node, h.granted, h.rate, h.holding, h.inFlight, h.demand, Math.max(0, left)));
      granted += h.granted;
      inFlight += h.inFlight;
    }
    Map<String, Integer> shares = budget.limited() ? runShares() : Map.of();
    List<BudgetView.Run> runViews = new ArrayList<>();
    runs.forEach(
        (id, claim) ->
            runViews.add(
                new BudgetView.Run(
                    id, claim.demand(), claim.burst(), shares.getOrDefault(id, claim.demand()))));
    long lastMinute = throttledAt.stream().mapToLong(t -> t[1]).sum();
    return new BudgetView(
        provider,
        budget.maxInFlight(),
        budget.maxRate(),
        source,
        budget.limited() ? aimd.effective() : 0,
        budget.rateAt(aimd.effective()),
        recovering,
        granted,
        inFlight,
        nodes,
        runViews,
        new BudgetView.Throttling(
            lastMinute, throttledTotal, lastThrottledAt, lastRetryAfterMillis),
        List.copyOf(changes));
  }
}

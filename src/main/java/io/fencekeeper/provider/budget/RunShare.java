package io.fencekeeper.provider.budget;

import java.time.Duration;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A run's side of its provider's budget (docs/design.md, "Provider budgets"), owned by the run's
 * dispatcher: it reports the run's demand to the keeper once a second and caps the governor's cap
 * by the share it learns. Until the first answer (or with no keeper) the governor's cap alone
 * holds; the permits still bound the calls.
 */
public final class RunShare {

  static final Duration REPORT_EVERY = Duration.ofSeconds(1);

  private final String provider;
  private final String runId;
  private final Optional<ActorRef<BudgetKeeper.Command>> keeper;
  private final ActorRef<BudgetKeeper.Share> replyTo;
  private BudgetKeeper.Share share;
  private long reportedAt;
  private boolean reported;

  public RunShare(
      String provider,
      String runId,
      Optional<ActorRef<BudgetKeeper.Command>> keeper,
      ActorRef<BudgetKeeper.Share> replyTo) {
    this.provider = provider;
    this.runId = runId;
    this.keeper = keeper;
    this.replyTo = replyTo;
  }

  public String provider() {
    return provider;
  }

  /** The run's cap on items in flight: the governor's, and at most the run's share. */
  public int capOf(int governorCap) {
    if (share == null || !share.limited()) {
      return governorCap;
    }
    return Math.min(governorCap, share.share());
  }

  /**
   * How many items the run would have in flight ({@code demand}) and whether its deadline is at
   * risk (the governor in BURST); sent at most once a second.
   */
  public void report(int demand, boolean burst, long nowNanos) {
    if (keeper.isEmpty()) {
      return;
    }
    if (reported && nowNanos - reportedAt < REPORT_EVERY.toNanos()) {
      return;
    }
    reported = true;
    reportedAt = nowNanos;
    keeper.get().tell(new BudgetKeeper.ReportRun(provider, runId, demand, burst, replyTo));
  }

  /**
   * The provider's effective budget of calls in flight, which bounds what more nodes can buy the
   * run; 0 when it has none (or the keeper has not answered yet).
   */
  public int budgetInFlight() {
    return share != null && share.limited() ? share.effective() : 0;
  }

  public void granted(BudgetKeeper.Share granted) {
    share = granted;
  }

  /** The run ended: its share goes to the other runs at once. */
  public void leave() {
    keeper.ifPresent(k -> k.tell(new BudgetKeeper.LeaveRun(provider, runId)));
  }
}

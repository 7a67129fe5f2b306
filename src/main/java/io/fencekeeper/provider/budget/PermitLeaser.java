package io.fencekeeper.provider.budget;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * A node's side of the provider budgets (docs/design.md, "Provider budgets"): renews the lease of
 * every {@link PermitPool} with the keeper a quarter of a lease apart, sooner when a pool asks
 * (more work than permits, a throttled answer, a shrunk grant drained), and brings the keeper's
 * grants to the pools. What to send and what a grant may change is {@link LeaseRenewals}'s.
 */
public final class PermitLeaser extends AbstractBehavior<PermitLeaser.Command> {

  /** Early renewals of one provider are at least this far apart. */
  static final Duration MIN_SPACING = Duration.ofMillis(100);

  public sealed interface Command {}

  private record RenewAll() implements Command {}

  private record RenewSoon(String provider) implements Command {}

  private record Granted(BudgetKeeper.Grant grant) implements Command {}

  /** {@code node}: this node's cluster address, as members are named. */
  public static Behavior<Command> create(
      String node,
      Map<String, PermitPool> pools,
      ActorRef<BudgetKeeper.Command> keeper,
      Duration permitLease) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> new PermitLeaser(ctx, timers, node, pools, keeper, permitLease)));
  }

  private final TimerScheduler<Command> timers;
  private final String node;
  private final ActorRef<BudgetKeeper.Command> keeper;
  private final ActorRef<BudgetKeeper.Grant> grants;
  private final Map<String, LeaseRenewals> renewals = new TreeMap<>();

  private PermitLeaser(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      String node,
      Map<String, PermitPool> pools,
      ActorRef<BudgetKeeper.Command> keeper,
      Duration permitLease) {
    super(ctx);
    this.timers = timers;
    this.node = node;
    this.keeper = keeper;
    this.grants = ctx.messageAdapter(BudgetKeeper.Grant.class, Granted::new);
    Duration every = permitLease.dividedBy(4);
    ActorRef<Command> self = ctx.getSelf();
    pools.forEach(
        (provider, pool) -> {
          renewals.put(provider, new LeaseRenewals(pool, every.toNanos(), MIN_SPACING.toNanos()));
          pool.onReportWanted(() -> self.tell(new RenewSoon(provider)));
        });
    timers.startTimerWithFixedDelay(new RenewAll(), every);
    onRenewAll(new RenewAll());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(RenewAll.class, this::onRenewAll)
        .onMessage(RenewSoon.class, this::onRenewSoon)
        .onMessage(Granted.class, this::onGranted)
        .build();
  }

  private Behavior<Command> onRenewAll(RenewAll tick) {
    long now = System.nanoTime();
    renewals.forEach(
        (provider, r) -> r.periodic(now).ifPresent(renewal -> send(provider, renewal)));
    return this;
  }

  private Behavior<Command> onRenewSoon(RenewSoon soon) {
    LeaseRenewals r = renewals.get(soon.provider());
    if (r == null) {
      return this;
    }
    long now = System.nanoTime();
    long wait = r.spacingLeft(now);
    if (wait > 0) {
      timers.startSingleTimer("soon-" + soon.provider(), soon, Duration.ofNanos(wait));
    } else {
      r.soon(now).ifPresent(renewal -> send(soon.provider(), renewal));
    }
    return this;
  }

  private Behavior<Command> onGranted(Granted granted) {
    String provider = granted.grant().provider();
    LeaseRenewals r = renewals.get(provider);
    if (r != null && r.granted(granted.grant())) {
      onRenewSoon(new RenewSoon(provider));
    }
    return this;
  }

  private void send(String provider, LeaseRenewals.Renewal renewal) {
    PermitPool.Report report = renewal.report();
    keeper.tell(
        new BudgetKeeper.Renew(
            provider,
            node,
            renewal.seq(),
            report.epoch(),
            report.version(),
            report.holding(),
            report.rateHolding(),
            report.inFlight(),
            report.demand(),
            report.calls(),
            report.throttled(),
            report.retryAfterMillis(),
            grants));
  }
}

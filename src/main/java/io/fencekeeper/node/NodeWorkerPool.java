package io.fencekeeper.node;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.budget.BudgetKeeper;
import io.fencekeeper.provider.budget.PermitLeaser;
import io.fencekeeper.provider.budget.PermitPool;
import io.fencekeeper.provider.factory.ProviderCatalog;
import io.fencekeeper.provider.factory.ProviderFactory;
import io.fencekeeper.worker.Backoff;
import io.fencekeeper.worker.CleanupDeadlines;
import io.fencekeeper.worker.ItemAttempt;
import io.fencekeeper.worker.LeaveOnShutdown;
import io.fencekeeper.worker.WorkerPool;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;

/**
 * The calling side of a node: its permits of every provider, renewed with the budget keeper, and
 * its worker pool, whose every call goes through those permits (docs/design.md, "Provider
 * budgets"). A node that only coordinates has permits and no pool.
 */
final class NodeWorkerPool {

  private NodeWorkerPool() {}

  /**
   * This node's permits of every provider, renewed with the budget keeper (docs/design.md,
   * "Provider budgets"). Every node reports, workers or not: a keeper that starts waits to hear
   * from every member before it grants anew.
   */
  static Map<String, PermitPool> permitPools(
      ActorSystem<Void> system, ProviderCatalog catalog, ActorRef<BudgetKeeper.Command> keeper) {
    Map<String, PermitPool> pools = new TreeMap<>();
    PermitPool.Timer timer =
        (delay, task) ->
            system.scheduler().scheduleOnce(delay, task, system.executionContext())::cancel;
    catalog
        .entries()
        .forEach(
            (name, entry) ->
                pools.put(
                    name,
                    new PermitPool(
                        name,
                        entry.budget(),
                        entry.settings().requestTimeout(),
                        System::nanoTime,
                        timer)));
    system.systemActorOf(
        PermitLeaser.create(system.address().toString(), pools, keeper, catalog.permitLease()),
        "permit-leaser",
        Props.empty());
    // a node that stops (leaving, downed, or just terminated) starts no more budgeted calls
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseBeforeServiceUnbind(),
            "close-provider-permits",
            () -> {
              pools.values().forEach(PermitPool::close);
              return CompletableFuture.completedFuture(org.apache.pekko.Done.getInstance());
            });
    system.getWhenTerminated().thenRun(() -> pools.values().forEach(PermitPool::close));
    return pools;
  }

  /**
   * This node's worker pool, unless it only coordinates: one provider per name (built only for the
   * workers), each call through its permits.
   */
  static Map<String, ProviderFactory.Started> start(
      ActorSystem<Void> system,
      int workers,
      ItemGateway items,
      ProviderCatalog catalog,
      Map<String, PermitPool> pools,
      Provider defaultProvider,
      Clock clock,
      ItemAttempt.AttemptListener attemptListener) {
    if (workers <= 0) {
      return Map.of();
    }
    Map<String, ProviderFactory.Started> providers = new TreeMap<>();
    Map<String, ItemAttempt.Context> attempts = new TreeMap<>();
    catalog
        .entries()
        .forEach(
            (name, entry) -> {
              ProviderFactory.Started provider;
              try {
                provider =
                    name.equals(ProviderName.DEFAULT) && defaultProvider != null
                        ? new ProviderFactory.Started(defaultProvider, Optional.empty())
                        : ProviderFactory.start(entry.settings(), system, workers);
              } catch (RuntimeException e) {
                // a provider that cannot start (a plugin refused) stops the node's start: the
                // ones built before it are closed, not left running behind it
                providers.forEach(
                    (built, started) -> {
                      if (!(built.equals(ProviderName.DEFAULT) && defaultProvider != null)) {
                        started.provider().close();
                      }
                    });
                throw e;
              }
              // the embedded sim is part of the node: it judges the cleanup deadline by the
              // node's clock (a test node whose clock is moved by hand sends deadlines by it)
              provider.sim().ifPresent(sim -> sim.useClock(clock));
              providers.put(name, provider);
              attempts.put(
                  name,
                  new ItemAttempt.Context(
                      items,
                      provider.provider(),
                      clock,
                      system.scheduler(),
                      system.executionContext(),
                      Backoff.defaults(),
                      attemptListener,
                      pools.get(name),
                      new CleanupDeadlines(
                          entry.settings().requestTimeout(),
                          entry.settings().clockSkewAllowance())));
            });
    ActorRef<WorkerPool.Command> pool =
        system.systemActorOf(
            WorkerPool.create(workers, system.address().toString(), attempts),
            "worker-pool",
            Props.empty());
    LeaveOnShutdown.register(system, pool);
    return providers;
  }
}

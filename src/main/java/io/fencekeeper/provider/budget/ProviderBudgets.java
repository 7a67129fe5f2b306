package io.fencekeeper.provider.budget;

import io.fencekeeper.Stages;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * The providers' budgets from any node (docs/design.md, "Provider budgets"): the keeper's view of
 * every provider, an operator's new budget (journaled by the keeper), and this node's own permits.
 */
public final class ProviderBudgets {

  private final ActorSystem<?> system;
  private final ActorRef<BudgetKeeper.Command> keeper;
  private final Map<String, PermitPool> pools;
  private final Duration askTimeout;

  public ProviderBudgets(
      ActorSystem<?> system,
      ActorRef<BudgetKeeper.Command> keeper,
      Map<String, PermitPool> pools,
      Duration askTimeout) {
    this.system = system;
    this.keeper = keeper;
    this.pools = Map.copyOf(pools);
    this.askTimeout = askTimeout;
  }

  /** Every provider the keeper knows, by name. */
  public CompletionStage<List<BudgetView>> views() {
    return Stages.on(
            AskPattern.<BudgetKeeper.Command, BudgetKeeper.Budgets>ask(
                keeper, BudgetKeeper.GetBudgets::new, askTimeout, system.scheduler()),
            system.executionContext())
        .thenApply(BudgetKeeper.Budgets::providers);
  }

  /** Sets a provider's budget; {@link BudgetKeeper.UnknownProvider} for a name nobody knows. */
  public CompletionStage<BudgetKeeper.SetReply> set(String provider, ProviderBudget budget) {
    return Stages.on(
        AskPattern.<BudgetKeeper.Command, BudgetKeeper.SetReply>ask(
            keeper,
            replyTo -> new BudgetKeeper.SetBudget(provider, budget, replyTo),
            askTimeout,
            system.scheduler()),
        system.executionContext());
  }

  /** This node's permits of each provider. */
  public Map<String, PermitPool> pools() {
    return pools;
  }
}

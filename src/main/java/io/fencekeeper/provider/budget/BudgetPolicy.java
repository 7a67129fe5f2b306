package io.fencekeeper.provider.budget;

import java.time.Duration;
import java.time.Instant;

/**
 * The provider's effective budget under throttling, as a pure function (docs/design.md, "Provider
 * budgets"): additive increase, multiplicative decrease on the permits, and the rate moves with
 * them ({@link ProviderBudget#rateAt}).
 *
 * <table>
 *   <caption>decision table, first matching row wins</caption>
 *   <tr><th>signal</th><th>decision</th></tr>
 *   <tr><td>no budget</td><td>nothing to decide</td></tr>
 *   <tr><td>throttled answers (429 / Retry-After) from any caller, cool-down over</td>
 *       <td>halve the effective permits, not below one</td></tr>
 *   <tr><td>throttled answers within the cool-down</td>
 *       <td>hold: one overload is one halving; the next step up waits a second</td></tr>
 *   <tr><td>no throttling, cool-down over, a second since the last change</td>
 *       <td>one permit more, up to the budget</td></tr>
 * </table>
 */
public final class BudgetPolicy {

  private BudgetPolicy() {}

  /** Where the effective budget stands; {@code lastDecrease} paces the halving. */
  public record Aimd(int effective, Instant lastDecrease, Instant lastChange) {

    public static Aimd full(ProviderBudget budget) {
      return new Aimd(budget.maxInFlight(), null, null);
    }
  }

  /** What a caller saw since the last decision. */
  public record Signals(Instant now, long throttled, Duration retryAfter) {

    public static Signals quiet(Instant now) {
      return new Signals(now, 0, Duration.ZERO);
    }
  }

  /** The state after the decision, and why it changed; {@code reason} is null when it did not. */
  public record Decision(Aimd next, String reason) {
    public boolean changed() {
      return reason != null;
    }
  }

  public static Decision decide(
      ProviderBudget budget, Aimd previous, Signals signals, Duration cooldown) {
    if (!budget.limited()) {
      return new Decision(previous, null);
    }
    int effective = Math.max(1, Math.min(previous.effective(), budget.maxInFlight()));
    boolean coolingDown =
        previous.lastDecrease() != null
            && signals.now().isBefore(previous.lastDecrease().plus(cooldown));
    if (signals.throttled() > 0) {
      if (coolingDown || effective == 1) {
        // one overload is one halving; it still puts the next step up off by a second
        return new Decision(new Aimd(effective, previous.lastDecrease(), signals.now()), null);
      }
      int halved = Math.max(1, effective / 2);
      return new Decision(
          new Aimd(halved, signals.now(), signals.now()),
          signals.throttled()
              + " throttled answers (Retry-After "
              + signals.retryAfter().toMillis()
              + " ms): "
              + describe(budget, effective)
              + " -> "
              + describe(budget, halved));
    }
    boolean stepDue =
        previous.lastChange() == null
            || !signals.now().isBefore(previous.lastChange().plusSeconds(1));
    if (effective < budget.maxInFlight() && !coolingDown && stepDue) {
      int grown = effective + 1;
      return new Decision(
          new Aimd(grown, previous.lastDecrease(), signals.now()),
          "no throttling since "
              + (previous.lastDecrease() == null ? "the start" : previous.lastDecrease())
              + ": "
              + describe(budget, effective)
              + " -> "
              + describe(budget, grown));
    }
    return new Decision(clamped(previous, effective), null);
  }

  private static Aimd clamped(Aimd previous, int effective) {
    return effective == previous.effective()
        ? previous
        : new Aimd(effective, previous.lastDecrease(), previous.lastChange());
  }

  static String describe(ProviderBudget budget, int effective) {
    int rate = budget.rateAt(effective);
    return effective + " in flight" + (rate > 0 ? " (" + rate + " calls/s)" : "");
  }
}

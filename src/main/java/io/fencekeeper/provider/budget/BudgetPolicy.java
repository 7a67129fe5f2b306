package io.fencekeeper.provider.budget;

import java.time.Duration;
import java.time.Instant;

/**
 * The provider's effective budget under throttling, as a pure function (docs/design.md, "Provider
 * budgets"): additive increase, multiplicative decrease on the permits when the share of the
 * provider's calls that were throttled says it limits its callers ({@link ThrottleShare}, the rule
 * each run's governor follows too), and the rate moves with them ({@link ProviderBudget#rateAt}).
 *
 * <table>
 *   <caption>decision table, first matching row wins</caption>
 *   <tr><th>signal</th><th>decision</th></tr>
 *   <tr><td>no budget</td><td>nothing to decide</td></tr>
 *   <tr><td>more than 5 % of the calls of every caller throttled over the last seconds (at least
 *       {@value ThrottleShare#MIN_THROTTLED}), cool-down over</td>
 *       <td>cut the effective permits to the share the provider accepted (at most by half, at
 *       least by one, not below one); nothing grows for the hold after it ({@link
 *       ThrottleShare#holdAfterCut})</td></tr>
 *   <tr><td>such a share within the cool-down</td>
 *       <td>hold: one overload is one cut; the next step up waits a second</td></tr>
 *   <tr><td>some throttling (2.5 % or more), or within the hold after the last cut</td>
 *       <td>hold</td></tr>
 *   <tr><td>otherwise, cool-down over, a second since the last change</td>
 *       <td>one permit more, up to the budget</td></tr>
 * </table>
 */
public final class BudgetPolicy {

  private BudgetPolicy() {}

  /**
   * Where the effective budget stands; {@code lastDecrease} paces the cuts, {@code waitUntil} is
   * when growth may resume after the last one ({@link ThrottleShare#holdAfterCut}).
   */
  public record Aimd(int effective, Instant lastDecrease, Instant lastChange, Instant waitUntil) {

    public Aimd(int effective, Instant lastDecrease, Instant lastChange) {
      this(effective, lastDecrease, lastChange, null);
    }

    public static Aimd full(ProviderBudget budget) {
      return new Aimd(budget.maxInFlight(), null, null);
    }

    /** Whether this state is a cut made at {@code now}. */
    public boolean decreasedAt(Instant now) {
      return now.equals(lastDecrease);
    }
  }

  /** The provider's calls over the last seconds, from every caller ({@link ThrottleShare}). */
  public record Signals(Instant now, ThrottleShare.Calls calls) {

    public Signals {
      calls = calls == null ? ThrottleShare.Calls.NONE : calls;
    }

    public static Signals quiet(Instant now) {
      return new Signals(now, ThrottleShare.Calls.NONE);
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
    Instant now = signals.now();
    ThrottleShare.Calls calls = signals.calls();
    ThrottleShare.Reading reading = calls.reading();
    boolean coolingDown =
        previous.lastDecrease() != null && now.isBefore(previous.lastDecrease().plus(cooldown));
    if (reading == ThrottleShare.Reading.LIMITING) {
      if (coolingDown || effective == 1) {
        // one overload is one cut; it still puts the next step up off by a second
        return new Decision(
            new Aimd(effective, previous.lastDecrease(), now, previous.waitUntil()), null);
      }
      int cut = ThrottleShare.cut(effective, calls.share(), 0.5, 1);
      return new Decision(
          new Aimd(
              cut,
              now,
              now,
              now.plus(
                  ThrottleShare.holdAfterCut(
                      calls, now, previous.lastDecrease(), previous.waitUntil()))),
          calls.describe()
              + " (Retry-After "
              + calls.waitAsked().toMillis()
              + " ms): "
              + describe(budget, effective)
              + " -> "
              + describe(budget, cut));
    }
    boolean stepDue =
        previous.lastChange() == null || !now.isBefore(previous.lastChange().plusSeconds(1));
    boolean waited = previous.waitUntil() == null || !now.isBefore(previous.waitUntil());
    if (reading == ThrottleShare.Reading.CLEAR
        && effective < budget.maxInFlight()
        && !coolingDown
        && waited
        && stepDue) {
      int grown = effective + 1;
      return new Decision(
          new Aimd(grown, previous.lastDecrease(), now, previous.waitUntil()),
          (previous.lastDecrease() == null
                  ? "no throttling since the start"
                  : "throttling below the cut since " + previous.lastDecrease())
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
        : new Aimd(effective, previous.lastDecrease(), previous.lastChange(), previous.waitUntil());
  }

  static String describe(ProviderBudget budget, int effective) {
    int rate = budget.rateAt(effective);
    return effective + " in flight" + (rate > 0 ? " (" + rate + " calls/s)" : "");
  }
}

package io.fencekeeper.provider.budget;

import io.fencekeeper.CborSerializable;
import java.util.ArrayList;
import java.util.List;

/**
 * What one provider allows, cluster-wide (docs/design.md, "Provider budgets"): at most {@code
 * maxInFlight} calls at once and at most {@code maxRate} calls a second, summed over every run and
 * every node. {@code maxInFlight} 0 is a provider without a budget (nothing is shared); {@code
 * maxRate} 0 is no rate limit.
 */
public record ProviderBudget(int maxInFlight, int maxRate) implements CborSerializable {

  public static final ProviderBudget NONE = new ProviderBudget(0, 0);

  /** The largest budget anyone may set: far above any provider, far below overflow. */
  public static final int MAX_IN_FLIGHT = 10_000;

  public static final int MAX_RATE = 1_000_000;

  public ProviderBudget {
    List<String> problems = problems(maxInFlight, maxRate);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
  }

  /** Whether calls of this provider need permits at all. */
  public boolean limited() {
    return maxInFlight > 0;
  }

  /**
   * The calls per second that go with {@code effective} permits: the rate shrinks and grows with
   * the permits (AIMD moves both), never below one call a second; 0 without a rate limit.
   */
  public int rateAt(int effective) {
    if (maxRate == 0 || maxInFlight == 0) {
      return 0;
    }
    return (int) Math.max(1, (long) maxRate * effective / maxInFlight);
  }

  /** Every problem with a budget, each naming its field; empty when it is valid. */
  public static List<String> problems(long maxInFlight, long maxRate) {
    List<String> problems = new ArrayList<>();
    if (maxInFlight < 0 || maxInFlight > MAX_IN_FLIGHT) {
      problems.add("maxInFlight must be between 0 and " + MAX_IN_FLIGHT + ", got " + maxInFlight);
    }
    if (maxRate < 0 || maxRate > MAX_RATE) {
      problems.add("maxRate must be between 0 and " + MAX_RATE + ", got " + maxRate);
    }
    if (problems.isEmpty() && maxRate > 0 && maxInFlight == 0) {
      problems.add("maxRate needs maxInFlight: a rate is shared out with the permits");
    }
    return problems;
  }

  @Override
  public String toString() {
    if (!limited()) {
      return "no budget";
    }
    return maxInFlight + " in flight" + (maxRate > 0 ? ", " + maxRate + " calls/s" : "");
  }
}

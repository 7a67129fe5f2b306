package io.fencekeeper.run.governor;

import io.fencekeeper.CborSerializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The operator's limits for the governor, cluster-wide per run: {@code normalCap} is what a healthy
 * run has in flight, {@code burstCap} the most it may use to meet a deadline, {@code minCap} the
 * floor of the multiplicative decrease. Node defaults come from {@code fencekeeper.governor} in
 * {@code conf/fencekeeper.conf}; {@code PUT /api/governor} changes the caps at run time.
 */
public record GovernorSettings(
    int normalCap,
    int burstCap,
    int minCap,
    double decreaseFactor,
    Duration decreaseCooldown,
    double deadlineMargin,
    int staleAlertThreshold)
    implements CborSerializable {

  /** The largest cap anyone may set: far above any provider's concurrency, far below overflow. */
  public static final int MAX_CAP = 10_000;

  public GovernorSettings {
    List<String> problems = capProblems(normalCap, burstCap, minCap);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    if (!(decreaseFactor > 0 && decreaseFactor < 1)) {
      throw new IllegalArgumentException(
          "decreaseFactor must be between 0 and 1, got " + decreaseFactor);
    }
  }

  /** The values of {@code conf/fencekeeper.conf}, for nodes built without a configuration. */
  public static GovernorSettings defaults() {
    return new GovernorSettings(16, 32, 1, 0.5, Duration.ofSeconds(1), 0.9, 3);
  }

  public GovernorSettings withCaps(int normal, int burst, int min) {
    return new GovernorSettings(
        normal, burst, min, decreaseFactor, decreaseCooldown, deadlineMargin, staleAlertThreshold);
  }

  /** Every problem with a set of caps, each naming its field; empty when they are consistent. */
  public static List<String> capProblems(int normalCap, int burstCap, int minCap) {
    List<String> problems = new ArrayList<>();
    requireCap(problems, "minCap", minCap);
    requireCap(problems, "normalCap", normalCap);
    requireCap(problems, "burstCap", burstCap);
    if (problems.isEmpty() && minCap > normalCap) {
      problems.add("minCap (" + minCap + ") must not exceed normalCap (" + normalCap + ")");
    }
    if (problems.isEmpty() && normalCap > burstCap) {
      problems.add("normalCap (" + normalCap + ") must not exceed burstCap (" + burstCap + ")");
    }
    return problems;
  }

  private static void requireCap(List<String> problems, String field, int value) {
    if (value < 1 || value > MAX_CAP) {
      problems.add(field + " must be between 1 and " + MAX_CAP + ", got " + value);
    }
  }
}

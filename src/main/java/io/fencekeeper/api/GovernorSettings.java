package io.fencekeeper.api;

import java.util.ArrayList;
import java.util.List;

/**
 * The worker caps an operator sets through {@code PUT /api/governor}: cluster-wide concurrency
 * towards the provider. Held in memory until the real governor (design §3.3) owns it.
 *
 * @param normalCap the cap while the backlog is healthy
 * @param burstCap the bounded cap when the projected finish approaches the deadline
 * @param minCap the floor that throttling (multiplicative decrease) never goes below
 */
public record GovernorSettings(int normalCap, int burstCap, int minCap) {

  public static final int MAX_CAP = 10_000;

  public static GovernorSettings defaults() {
    return new GovernorSettings(8, 16, 1);
  }

  /** Every problem, each naming its field; empty when the caps are consistent. */
  public List<String> problems() {
    List<String> problems = new ArrayList<>();
    if (minCap < 1 || minCap > MAX_CAP) {
      problems.add("minCap must be between 1 and " + MAX_CAP + ", got " + minCap);
    }
    if (normalCap < 1 || normalCap > MAX_CAP) {
      problems.add("normalCap must be between 1 and " + MAX_CAP + ", got " + normalCap);
    }
    if (burstCap < 1 || burstCap > MAX_CAP) {
      problems.add("burstCap must be between 1 and " + MAX_CAP + ", got " + burstCap);
    }
    if (problems.isEmpty() && minCap > normalCap) {
      problems.add("minCap (" + minCap + ") must not exceed normalCap (" + normalCap + ")");
    }
    if (problems.isEmpty() && normalCap > burstCap) {
      problems.add("normalCap (" + normalCap + ") must not exceed burstCap (" + burstCap + ")");
    }
    return problems;
  }
}

package io.fencekeeper.provider.budget;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * How a provider's budget is shared out (docs/design.md, "Provider budgets"), as pure functions:
 * between the runs that call the provider (weighted max-min fairness) and between the nodes that
 * hold its permits (max-min by demand, the rest spread over the nodes that want any).
 */
public final class FairSplit {

  /** A run in BURST (its deadline at risk) counts this many times in a contested budget. */
  public static final int BURST_WEIGHT = 2;

  private FairSplit() {}

  /** One claimant: how many permits it would use, and how much it counts when they are short. */
  public record Claim(String id, int demand, int weight) {
    public Claim {
      if (weight < 1) {
        throw new IllegalArgumentException("weight must be at least 1, got " + weight);
      }
    }

    public static Claim of(String id, int demand) {
      return new Claim(id, demand, 1);
    }
  }

  /**
   * Weighted max-min fair shares of {@code budget}: permits go one at a time to the claimant with
   * the fewest per unit of weight (ties: the lower id) among those that want more. Nobody gets more
   * than it asks; what one does not use goes to the others; with at least as many permits as
   * claimants, every claimant with demand gets one. Claimants without demand get 0.
   */
  public static Map<String, Integer> weighted(int budget, List<Claim> claims) {
    Map<String, Integer> shares = new LinkedHashMap<>();
    claims.forEach(c -> shares.put(c.id(), 0));
    // a/wa < b/wb  <=>  a*wb < b*wa: no floating point in the order
    PriorityQueue<Claim> wanting =
        new PriorityQueue<>(
            (a, b) -> {
              long left = (long) shares.get(a.id()) * b.weight();
              long right = (long) shares.get(b.id()) * a.weight();
              return left != right ? Long.compare(left, right) : a.id().compareTo(b.id());
            });
    for (Claim claim : claims) {
      if (claim.demand() > 0) {
        wanting.add(claim);
      }
    }
    int left = budget;
    while (left > 0 && !wanting.isEmpty()) {
      Claim next = wanting.poll();
      int share = shares.merge(next.id(), 1, Integer::sum);
      left--;
      if (share < next.demand()) {
        wanting.add(next);
      }
    }
    return shares;
  }

  /**
   * The nodes' permits: max-min fair by demand, then whatever is left spread evenly (ties: the
   * lower id) over the nodes with any demand, so that a node whose work grows has slack before it
   * has to ask. Nodes without demand get 0.
   */
  public static Map<String, Integer> withSurplus(int budget, List<Claim> claims) {
    Map<String, Integer> shares = weighted(budget, claims);
    int left = budget - shares.values().stream().mapToInt(Integer::intValue).sum();
    List<String> demanding =
        claims.stream().filter(c -> c.demand() > 0).map(Claim::id).sorted().toList();
    for (int i = 0; left > 0 && !demanding.isEmpty(); i++, left--) {
      shares.merge(demanding.get(i % demanding.size()), 1, Integer::sum);
    }
    return shares;
  }

  /**
   * {@code total} split in proportion to {@code weights} (largest remainder; ties: the lower id).
   * With every weight 0, everyone gets 0.
   */
  public static Map<String, Integer> proportional(int total, Map<String, Integer> weights) {
    Map<String, Integer> parts = new LinkedHashMap<>();
    long sum = weights.values().stream().mapToLong(Integer::longValue).sum();
    weights.keySet().forEach(id -> parts.put(id, 0));
    if (sum == 0 || total == 0) {
      return parts;
    }
    int given = 0;
    Map<String, Long> remainders = new LinkedHashMap<>();
    for (Map.Entry<String, Integer> e : weights.entrySet()) {
      long exact = (long) total * e.getValue();
      int part = (int) (exact / sum);
      parts.put(e.getKey(), part);
      remainders.put(e.getKey(), exact % sum);
      given += part;
    }
    List<String> byRemainder =
        remainders.entrySet().stream()
            .filter(e -> weights.get(e.getKey()) > 0)
            .sorted(
                Map.Entry.<String, Long>comparingByValue()
                    .reversed()
                    .thenComparing(Map.Entry.comparingByKey()))
            .map(Map.Entry::getKey)
            .toList();
    for (int i = 0; given < total && !byRemainder.isEmpty(); i++, given++) {
      parts.merge(byRemainder.get(i % byRemainder.size()), 1, Integer::sum);
    }
    return parts;
  }
}

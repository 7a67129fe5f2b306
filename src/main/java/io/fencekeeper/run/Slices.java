package io.fencekeeper.run;

import io.fencekeeper.provider.budget.FairSplit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How a run's cap is sliced between the nodes that dispatch it (docs/design.md, "Dispatch on every
 * node"), as a pure function: max-min fair by each node's demand, what is left spread over the
 * nodes that want any. The slices never add up to more than the cap, counting what a node may still
 * have in flight: a slice shrinks at once, and grows only out of room that no node may be using (a
 * node that was told to shrink may still have its old slice's items in flight until it reports they
 * settled, and may go on filling its old slice until the shrink reaches it: until it reports the
 * new slice, the old one counts).
 */
final class Slices {

  private Slices() {}

  /**
   * One node: {@code demand}, how many items it could put in flight now; {@code granted}, the slice
   * it was last given; {@code inFlight} and {@code reportedSlice}, what it last reported in flight
   * and the slice it was applying then.
   */
  record Node(String id, int demand, int granted, int inFlight, int reportedSlice) {

    /** What the node may be using under a slice of {@code slice}, as far as its reports tell. */
    int mayUse(int slice) {
      return Math.max(slice, Math.max(inFlight, reportedSlice));
    }
  }

  /** The new slice of each node. */
  static Map<String, Integer> split(int cap, List<Node> nodes) {
    List<FairSplit.Claim> claims = new ArrayList<>();
    nodes.forEach(n -> claims.add(FairSplit.Claim.of(n.id(), Math.max(0, n.demand()))));
    Map<String, Integer> target = FairSplit.withSurplus(Math.max(0, cap), claims);
    Map<String, Integer> slices = new TreeMap<>();
    long holding = 0;
    for (Node n : nodes) {
      int slice = Math.min(n.granted(), target.get(n.id())); // shrinking: at once
      slices.put(n.id(), slice);
      holding += n.mayUse(slice);
    }
    long room = cap - holding;
    for (Node n : nodes) {
      int slice = slices.get(n.id());
      int wanted = target.get(n.id()) - slice;
      if (wanted <= 0 || room <= 0) {
        continue;
      }
      // growing a node counts only beyond what it may already be using
      long used = n.mayUse(slice);
      int grow = (int) Math.min(wanted, room + (used - slice));
      if (grow <= 0) {
        continue;
      }
      room -= Math.max(0, (long) slice + grow - used);
      slices.put(n.id(), slice + grow);
    }
    return slices;
  }
}

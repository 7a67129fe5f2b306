package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A run's cap sliced between the nodes that dispatch it: by demand, never more in all than the cap,
 * counting what a node that was told to shrink may still have in flight.
 */
class SlicesTest {

  /** A node whose last report came after its last slice reached it. */
  static Slices.Node node(String id, int demand, int granted, int inFlight) {
    return new Slices.Node(id, demand, granted, inFlight, granted);
  }

  /**
   * Issue 35 (ClusterWideCapTest saw 6 calls at once under a cap of 5): a shrink counts at once,
   * but the node it is for goes on filling its old slice until the shrink reaches it, and its last
   * report is older than that. Here a reported 1 in flight under its slice of 2 and may have put a
   * second one in flight since: until a report shows the new slice, the old one counts, and nobody
   * grows into it.
   */
  @Test
  void aShrunkNodeCountsItsOldSliceUntilItReportsTheNewOne() {
    Map<String, Integer> slices = capOfFiveBesideBAndC(new Slices.Node("a", 1, 2, 1, 2));
    assertEquals(1, slices.get("a"), "shrinks at once");
    assertEquals(3, slices.get("b") + slices.get("c"), "nobody grows into a's old slice yet");

    Map<String, Integer> later = capOfFiveBesideBAndC(new Slices.Node("a", 1, 1, 1, 1));
    assertEquals(4, later.get("b") + later.get("c"), "a reported its new slice: the room is free");
  }

  /** A cap of 5 split between {@code a} and two busy nodes holding 2 and 1. */
  private static Map<String, Integer> capOfFiveBesideBAndC(Slices.Node a) {
    return Slices.split(
        5, List.of(a, new Slices.Node("b", 8, 2, 2, 2), new Slices.Node("c", 8, 1, 1, 1)));
  }

  @Test
  void nodesThatWantTheSameShareTheCapEvenly() {
    Map<String, Integer> slices =
        Slices.split(16, List.of(node("a", 32, 0, 0), node("b", 32, 0, 0), node("c", 32, 0, 0)));
    assertEquals(16, slices.values().stream().mapToInt(Integer::intValue).sum());
    assertTrue(slices.values().stream().allMatch(s -> s == 5 || s == 6), slices.toString());
  }

  @Test
  void aNodeWithLittleLeftGetsWhatItWantsAndTheOthersTheRest() {
    Map<String, Integer> slices =
        Slices.split(16, List.of(node("a", 2, 0, 0), node("b", 32, 0, 0), node("c", 32, 0, 0)));
    assertEquals(2, slices.get("a"));
    assertEquals(14, slices.get("b") + slices.get("c"));
  }

  @Test
  void aSliceShrinksAtOnceButGrowthWaitsForWhatTheShrunkNodeStillHasInFlight() {
    // b is taken from 10 to 5 but still runs 10: c may only grow into what is really free
    Map<String, Integer> slices =
        Slices.split(15, List.of(node("b", 5, 10, 10), node("c", 10, 5, 5)));
    assertEquals(5, slices.get("b"), "shrinks at once");
    assertEquals(5, slices.get("c"), "grows only once b's items have settled");

    Map<String, Integer> later = Slices.split(15, List.of(node("b", 5, 5, 5), node("c", 10, 5, 5)));
    assertEquals(10, later.get("c"), "b reported its items settled: c grows");
  }

  @Test
  void aNodeWithoutDemandGetsNothingAndACapOfZeroGivesNothing() {
    assertEquals(0, Slices.split(16, List.of(node("a", 0, 0, 0), node("b", 8, 0, 0))).get("a"));
    assertEquals(
        Map.of("a", 0, "b", 0), Slices.split(0, List.of(node("a", 8, 4, 4), node("b", 8, 4, 0))));
  }

  @Test
  void overManyRandomStepsWhatNodesMayUseNeverExceedsTheCap() {
    Random random = new Random(22);
    for (int life = 0; life < 500; life++) {
      int nodes = 1 + random.nextInt(4);
      int[] granted = new int[nodes];
      int[] inFlight = new int[nodes];
      int cap = 1 + random.nextInt(32);
      for (int step = 0; step < 30; step++) {
        if (random.nextInt(5) == 0) {
          cap = 1 + random.nextInt(32); // the governor moved the cap
        }
        List<Slices.Node> claims = new java.util.ArrayList<>();
        for (int i = 0; i < nodes; i++) {
          claims.add(node("n" + i, random.nextInt(40), granted[i], inFlight[i]));
        }
        Map<String, Integer> slices = Slices.split(cap, claims);
        long mayUse = 0;
        for (int i = 0; i < nodes; i++) {
          granted[i] = slices.get("n" + i);
          mayUse += Math.max(granted[i], inFlight[i]);
          // the node puts up to its slice in flight, or some of its items settle
          inFlight[i] = random.nextBoolean() ? granted[i] : random.nextInt(inFlight[i] + 1);
        }
        long before = 0;
        for (int i = 0; i < nodes; i++) {
          before += Math.max(claims.get(i).granted(), claims.get(i).inFlight());
        }
        assertTrue(
            mayUse <= Math.max(cap, before),
            "life " + life + " step " + step + ": " + mayUse + " may be used, cap " + cap);
      }
    }
  }
}

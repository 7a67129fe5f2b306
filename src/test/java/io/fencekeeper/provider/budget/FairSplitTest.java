package io.fencekeeper.provider.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.budget.FairSplit.Claim;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fairness rule of docs/design.md, "Provider budgets", one case per sentence of it. */
class FairSplitTest {

  static Claim run(String id, int demand, boolean burst) {
    return new Claim(id, demand, burst ? FairSplit.BURST_WEIGHT : 1);
  }

  @Test
  void twoRunsThatEachWantMoreThanTheBudgetSplitItEvenly() {
    Map<String, Integer> shares =
        FairSplit.weighted(8, List.of(run("tonight", 16, false), run("last-night", 16, false)));
    assertEquals(Map.of("tonight", 4, "last-night", 4), shares);
  }

  @Test
  void whatOneRunDoesNotUseGoesToTheOther() {
    Map<String, Integer> shares =
        FairSplit.weighted(8, List.of(run("almost-done", 2, false), run("big", 16, false)));
    assertEquals(Map.of("almost-done", 2, "big", 6), shares);
  }

  @Test
  void aRunInBurstBorrowsFromOneThatIsNot() {
    Map<String, Integer> shares =
        FairSplit.weighted(8, List.of(run("on-time", 16, false), run("late", 32, true)));
    // twice the weight: two thirds of a contested budget, and the on-time run keeps a third
    assertEquals(Map.of("on-time", 3, "late", 5), shares);
    // two runs in burst are even again
    assertEquals(
        Map.of("a", 4, "b", 4),
        FairSplit.weighted(8, List.of(run("a", 32, true), run("b", 32, true))));
  }

  @Test
  void aLateRunTakesOnlyWhatTheOtherDoesNotNeedWhenItAsksLittle() {
    // borrowing is bounded by the lender's fair share: an on-time run asking little keeps it all
    Map<String, Integer> shares =
        FairSplit.weighted(8, List.of(run("on-time", 2, false), run("late", 32, true)));
    assertEquals(Map.of("on-time", 2, "late", 6), shares);
  }

  @Test
  void everyRunWithWorkGetsAPermitWhenThereAreAsManyAsRuns() {
    Map<String, Integer> shares =
        FairSplit.weighted(
            3, List.of(run("late", 32, true), run("b", 16, false), run("c", 16, false)));
    assertEquals(Map.of("late", 1, "b", 1, "c", 1), shares);
    assertEquals(
        Map.of("idle", 0, "busy", 3),
        FairSplit.weighted(3, List.of(run("idle", 0, false), run("busy", 9, false))));
  }

  @Test
  void sharesNeverExceedTheBudgetNorWhatEachAsked() {
    Random random = new Random(17);
    for (int round = 0; round < 2000; round++) {
      int budget = random.nextInt(40);
      List<Claim> claims = new ArrayList<>();
      int asked = 0;
      for (int i = random.nextInt(6); i >= 0; i--) {
        int demand = random.nextInt(20);
        asked += demand;
        claims.add(run("r" + i, demand, random.nextBoolean()));
      }
      Map<String, Integer> shares = FairSplit.weighted(budget, claims);
      int total = 0;
      for (Claim claim : claims) {
        int share = shares.get(claim.id());
        assertTrue(share >= 0 && share <= claim.demand(), claim + " got " + share);
        total += share;
      }
      // the budget is used up whenever anyone wants it
      assertEquals(Math.min(budget, asked), total, claims + " of " + budget + ": " + shares);
    }
  }

  @Test
  void nodesGetTheirDemandAndTheRestIsSpreadOverTheBusyOnes() {
    Map<String, Integer> permits =
        FairSplit.withSurplus(
            8, List.of(Claim.of("node-a", 3), Claim.of("node-b", 1), Claim.of("node-c", 0)));
    assertEquals(Map.of("node-a", 5, "node-b", 3, "node-c", 0), permits);
    // short of permits: max-min by demand, nothing left to spread
    assertEquals(
        Map.of("node-a", 3, "node-b", 3),
        FairSplit.withSurplus(6, List.of(Claim.of("node-a", 9), Claim.of("node-b", 4))));
  }

  @Test
  void theRateFollowsThePermits() {
    assertEquals(
        Map.of("a", 15, "b", 15, "c", 10),
        FairSplit.proportional(40, Map.of("a", 3, "b", 3, "c", 2)));
    Map<String, Integer> thirds = FairSplit.proportional(10, Map.of("a", 1, "b", 1, "c", 1));
    assertEquals(10, thirds.values().stream().mapToInt(Integer::intValue).sum());
    assertEquals(Map.of("a", 4, "b", 3, "c", 3), thirds);
    assertEquals(Map.of("a", 0), FairSplit.proportional(10, Map.of("a", 0)));
  }
}

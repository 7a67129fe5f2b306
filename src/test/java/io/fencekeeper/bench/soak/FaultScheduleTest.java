package io.fencekeeper.bench.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.bench.soak.FaultSchedule.Fault;
import io.fencekeeper.bench.soak.FaultSchedule.Kind;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The soak's faults replay from their seed and keep to the product's timings. */
class FaultScheduleTest {

  private static final List<Kind> ALL = Arrays.asList(Kind.values());
  private static final Duration LEASE = Duration.ofSeconds(10);
  private static final Duration HOUR = Duration.ofHours(1);

  @Test
  void theSameSeedGivesTheSameFaultsAndAnotherSeedOthers() {
    List<Fault> first = FaultSchedule.draw(42, HOUR, ALL, LEASE);
    assertEquals(first, FaultSchedule.draw(42, HOUR, ALL, LEASE));
    assertNotEquals(first, FaultSchedule.draw(43, HOUR, ALL, LEASE));
  }

  @Test
  void everyFaultComesTwentyToSixtySecondsAfterTheLastAndKeepsToItsBounds() {
    Set<Kind> seen = EnumSet.noneOf(Kind.class);
    Set<Integer> nodes = new java.util.TreeSet<>();
    for (long seed = 0; seed < 20; seed++) {
      for (Fault fault : FaultSchedule.draw(seed, HOUR, ALL, LEASE)) {
        seen.add(fault.kind());
        assertTrue(between(fault.gap(), 20, 60), fault.toString());
        switch (fault.kind()) {
          case KILL -> assertEquals(Duration.ZERO, fault.length());
          // past the lease, so the node is downed and its leases are taken over while it sleeps
          case PAUSE -> assertTrue(between(fault.length(), 11, 20), fault.toString());
          case PARTITION -> assertTrue(between(fault.length(), 5, 30), fault.toString());
          case DATABASE -> {
            assertTrue(between(fault.length(), 5, 15), fault.toString());
            assertEquals(0, fault.node(), "the database is nobody's node");
          }
          case CLOCK -> assertTrue(between(fault.length(), 2, 30), fault.toString());
        }
        if (fault.kind() != Kind.DATABASE) {
          nodes.add(fault.node());
        }
      }
    }
    assertEquals(EnumSet.allOf(Kind.class), seen);
    assertEquals(Set.of(1, 2, 3), nodes, "any node, the oldest included");
  }

  @Test
  void theFaultsFillTheWindowWithOnlyTheKindsAllowed() {
    List<Fault> faults = FaultSchedule.draw(7, Duration.ofMinutes(30), List.of(Kind.KILL), LEASE);
    Duration filled = faults.stream().map(Fault::gap).reduce(Duration.ZERO, Duration::plus);
    assertTrue(filled.compareTo(Duration.ofMinutes(30)) >= 0, filled.toString());
    assertTrue(faults.stream().allMatch(f -> f.kind() == Kind.KILL));
    assertEquals(List.of(1, 2, 3), faults.subList(0, 3).stream().map(Fault::number).toList());
    assertEquals(
        "1 " + faults.get(0).gap().toSeconds() + " kill " + faults.get(0).node() + " 0",
        faults.get(0).line());
  }

  @Test
  void aKindIsNamedAsTheScriptNamesIt() {
    for (Kind kind : Kind.values()) {
      assertEquals(kind, Kind.ofLabel(kind.label()));
    }
    assertThrows(IllegalArgumentException.class, () -> Kind.ofLabel("reboot"));
    assertThrows(
        IllegalArgumentException.class, () -> FaultSchedule.draw(1, HOUR, List.of(), LEASE));
  }

  private static boolean between(Duration d, long low, long high) {
    return d.toSeconds() >= low && d.toSeconds() <= high;
  }
}

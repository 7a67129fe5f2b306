package io.fencekeeper.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A side passes only if every item with an action has exactly one effect, and no other has any. */
class LedgerCheckTest {

  private static final List<String> KEYS = List.of("k1", "k2", "k3", "k4");
  private static final Set<String> TO_APPLY = Set.of("k1", "k2", "k3");

  @Test
  void oneEffectPerItemWithAnActionPasses() {
    LedgerCheck check =
        LedgerCheck.of(
            "fencekeeper", KEYS, TO_APPLY, Map.of("k1", 1L, "k2", 1L, "k3", 1L, "other", 5L));
    assertTrue(check.ok(), check.toString());
    assertEquals(3, check.appliedOnce());
    assertEquals(4, check.items());
    assertTrue(check.toString().endsWith("OK"), check.toString());
  }

  @Test
  void aMissingEffectFails() {
    LedgerCheck check = LedgerCheck.of("db-scheduler", KEYS, TO_APPLY, Map.of("k1", 1L, "k3", 1L));
    assertFalse(check.ok());
    assertEquals(1, check.missing());
    assertTrue(check.toString().endsWith("FAILED"), check.toString());
  }

  @Test
  void aSecondEffectFails() {
    LedgerCheck check = LedgerCheck.of("x", KEYS, TO_APPLY, Map.of("k1", 1L, "k2", 2L, "k3", 1L));
    assertFalse(check.ok());
    assertEquals(1, check.appliedMoreThanOnce());
  }

  @Test
  void anEffectWhereThePlanHadNothingToDoFails() {
    LedgerCheck check =
        LedgerCheck.of("x", KEYS, TO_APPLY, Map.of("k1", 1L, "k2", 1L, "k3", 1L, "k4", 1L));
    assertFalse(check.ok());
    assertEquals(1, check.unexpected());
  }
}

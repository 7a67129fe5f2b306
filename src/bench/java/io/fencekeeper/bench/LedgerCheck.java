package io.fencekeeper.bench;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Collection;
import java.util.Map;
import java.util.Set;

/**
 * Did one side of the provider comparison do the work it was timed for? Read from the sim's ledger
 * after the fact: every item whose plan has an action has exactly one effect under its key, and no
 * other item has any. A side that skipped calls, or applied twice, would otherwise just look fast.
 *
 * @param items the side's items (one idempotency key each)
 * @param toApply of them, those whose plan has an action
 * @param appliedOnce keys with exactly one effect, among those to apply
 * @param missing keys to apply without an effect
 * @param appliedMoreThanOnce keys with two effects or more
 * @param unexpected keys with an effect whose plan had nothing to do
 */
record LedgerCheck(
    String side,
    int items,
    int toApply,
    int appliedOnce,
    int missing,
    int appliedMoreThanOnce,
    int unexpected) {

  static LedgerCheck of(
      String side, Collection<String> keys, Set<String> keysToApply, Map<String, Long> effects) {
    int once = 0;
    int missing = 0;
    int more = 0;
    int unexpected = 0;
    for (String key : keys) {
      long n = effects.getOrDefault(key, 0L);
      boolean expected = keysToApply.contains(key);
      if (n >= 2) {
        more++;
      }
      if (expected && n == 1) {
        once++;
      } else if (expected && n == 0) {
        missing++;
      } else if (!expected && n > 0) {
        unexpected++;
      }
    }
    return new LedgerCheck(side, keys.size(), keysToApply.size(), once, missing, more, unexpected);
  }

  @JsonProperty("ok")
  boolean ok() {
    return missing == 0 && appliedMoreThanOnce == 0 && unexpected == 0 && appliedOnce == toApply;
  }

  @Override
  public String toString() {
    return String.format(
        "%s: %,d of %,d items applied exactly once (%,d had nothing to do), %d missing,"
            + " %d applied more than once, %d applied without an action: %s",
        side,
        appliedOnce,
        items,
        items - toApply,
        missing,
        appliedMoreThanOnce,
        unexpected,
        ok() ? "OK" : "FAILED");
  }
}

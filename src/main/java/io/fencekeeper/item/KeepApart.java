package io.fencekeeper.item;

import io.fencekeeper.CborSerializable;
import java.util.Set;

/**
 * What a claim must keep apart from (docs/design.md, "Lost together, kept apart"). The items whose
 * holders were lost in one node's death are that node's <em>loss cohort</em>; a node never holds
 * two items of one cohort in flight at once, so that a poison item's next kill cannot take the
 * neighbours of its last one with it (they would reach K lost holders beside it). A claim names the
 * cohorts its node has in flight ({@code cohorts}), or refuses every item that is in a cohort at
 * all ({@code anyCohort}: the claim of a node whose turn to take a cohort's item belongs to another
 * of its claims). An item in no cohort is never refused. Sent with a claim, never stored.
 */
public record KeepApart(boolean anyCohort, Set<String> cohorts) implements CborSerializable {

  /**
   * A claim that may take any item (the lease API's, a claim from a node that keeps none apart).
   */
  public static final KeepApart NOTHING = new KeepApart(false, Set.of());

  /** A claim that takes only items in no loss cohort. */
  public static final KeepApart ANY_COHORT = new KeepApart(true, Set.of());

  public KeepApart {
    cohorts = cohorts == null ? Set.of() : Set.copyOf(cohorts);
  }

  /** A claim that keeps apart from the cohorts its node has in flight. */
  public static KeepApart from(Set<String> inFlight) {
    return inFlight.isEmpty() ? NOTHING : new KeepApart(false, inFlight);
  }

  /** Whether an item in the cohorts {@code itemCohorts} must not be claimed. */
  boolean refuses(Set<String> itemCohorts) {
    if (itemCohorts.isEmpty()) {
      return false;
    }
    return anyCohort || itemCohorts.stream().anyMatch(cohorts::contains);
  }
}

package io.fencekeeper.worker;

import io.fencekeeper.item.KeepApart;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One node's loss cohorts in flight (docs/design.md, "Lost together, kept apart"): the items whose
 * holders were lost in one node's death never share this node's flight again until each completes.
 * An attempt first claims with {@link KeepApart#ANY_COHORT}, which any item in no cohort passes at
 * once; an item in a cohort answers {@code KeptApart}, and its attempt claims again in its turn:
 * one such claim at a time per node, keeping apart from every cohort this node has in flight, so
 * that two claims of one cohort can never both be granted here. What a granted claim joined counts
 * until its attempt ends. No Pekko: the attempts call it from the node's dispatcher threads.
 */
final class CohortGate {

  /** A gate that keeps nothing apart: every claim may take any item (an attempt outside a pool). */
  static final CohortGate NONE = new CohortGate(false);

  private final boolean keeps;
  private final Map<String, Integer> inFlight = new HashMap<>();
  private final ArrayDeque<CompletableFuture<KeepApart>> waiting = new ArrayDeque<>();
  private boolean turnTaken;

  private CohortGate(boolean keeps) {
    this.keeps = keeps;
  }

  /** The gate of one node's worker pool. */
  static CohortGate forPool() {
    return new CohortGate(true);
  }

  /** What an attempt's first claim keeps apart from: every cohort, so none waits for a turn. */
  KeepApart firstClaim() {
    return keeps ? KeepApart.ANY_COHORT : KeepApart.NOTHING;
  }

  /** Whether an item kept apart by the first claim may claim again in its turn. */
  boolean keeps() {
    return keeps;
  }

  /**
   * The turn to claim an item of a cohort, when no other claim of this node has it: completes with
   * the cohorts this node has in flight then, which the claim must keep apart from. The holder of
   * the turn must end it with {@link #turnEnded}.
   */
  CompletionStage<KeepApart> turn() {
    synchronized (this) {
      if (turnTaken) {
        CompletableFuture<KeepApart> later = new CompletableFuture<>();
        waiting.add(later);
        return later;
      }
      turnTaken = true;
      return CompletableFuture.completedFuture(KeepApart.from(Set.copyOf(inFlight.keySet())));
    }
  }

  /**
   * The claim that had the turn was answered: {@code joined} are the cohorts it joined if it was
   * granted (none otherwise); the next claim waiting gets the turn.
   */
  void turnEnded(Set<String> joined) {
    CompletableFuture<KeepApart> next;
    KeepApart keepApart;
    synchronized (this) {
      join(joined);
      next = waiting.poll();
      turnTaken = next != null;
      keepApart = KeepApart.from(Set.copyOf(inFlight.keySet()));
    }
    if (next != null) {
      next.complete(keepApart);
    }
  }

  /** A claim made outside a turn was granted in {@code cohorts} (a node of an older version). */
  synchronized void joined(Set<String> cohorts) {
    join(cohorts);
  }

  /** The attempt that joined {@code cohorts} ended: they no longer count here. */
  synchronized void left(Set<String> cohorts) {
    for (String cohort : cohorts) {
      inFlight.computeIfPresent(cohort, (c, n) -> n > 1 ? n - 1 : null);
    }
  }

  /** The cohorts in flight on this node, for tests and the pool's view. */
  synchronized Set<String> inFlight() {
    return Set.copyOf(inFlight.keySet());
  }

  private void join(Set<String> cohorts) {
    for (String cohort : cohorts) {
      inFlight.merge(cohort, 1, Integer::sum);
    }
  }
}

package io.fencekeeper.run;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Which of a run's orphan shards (open items, no live node reporting it hosts them) to wake now by
 * asking one of their items. A poke waits for its own answer: at a run's start a hundred shards are
 * allocated at once, answers take seconds on a busy node, and asking again every second while the
 * first ask is on its way only adds to that. A shard whose poke was answered is allocated; its host
 * reports it within a report or two, so it is asked again only if {@link #ANSWER_LASTS} passes
 * without that report. A poke that failed (its ask timed out: the shard was homed on a node that
 * died) is repeated at once. A member's removal forgets every poke: an ask that raced it went to
 * the dead node, and waiting for its time-out would let the dead node's leases wait too.
 */
final class OrphanPokes {

  /** How long an answered poke stands for its shard before a silent shard is asked again. */
  static final Duration ANSWER_LASTS = Duration.ofSeconds(3);

  private final Map<Integer, CompletableFuture<?>> waiting = new HashMap<>();
  private final Map<Integer, Instant> answered = new HashMap<>();

  /** Of {@code orphans} (shard numbers), the ones to ask now. */
  List<Integer> due(List<Integer> orphans, Instant now) {
    var stillOrphans = new HashSet<>(orphans);
    waiting.keySet().retainAll(stillOrphans);
    answered.keySet().retainAll(stillOrphans);
    List<Integer> due = new ArrayList<>();
    for (int shard : orphans) {
      CompletableFuture<?> ask = waiting.get(shard);
      if (ask != null) {
        if (!ask.isDone()) {
          continue;
        }
        waiting.remove(shard);
        if (!ask.isCompletedExceptionally()) {
          answered.put(shard, now);
        }
      }
      Instant at = answered.get(shard);
      if (at == null || !now.isBefore(at.plus(ANSWER_LASTS))) {
        answered.remove(shard);
        due.add(shard);
      }
    }
    return due;
  }

  /** {@code shard} was asked; {@code answer} completes with its item's answer. */
  void asked(int shard, CompletableFuture<?> answer) {
    waiting.put(shard, answer);
  }

  /** A member was removed: every shard is asked anew. */
  void forget() {
    waiting.clear();
    answered.clear();
  }
}

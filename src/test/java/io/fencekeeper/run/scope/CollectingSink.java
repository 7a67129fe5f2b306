package io.fencekeeper.run.scope;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/** A sink for reader tests: finds repeats in memory and hands each batch's new accounts on. */
final class CollectingSink implements ScopeSink {

  private final Consumer<List<AccountCursor>> batches;
  private final Map<AccountCursor, Long> firstSeen = new HashMap<>();

  /** What the reader said of its read with each batch. */
  final List<ReadSoFar> soFars = new ArrayList<>();

  private CollectingSink(Consumer<List<AccountCursor>> batches) {
    this.batches = batches;
  }

  static CollectingSink into(Consumer<List<AccountCursor>> batches) {
    return new CollectingSink(batches);
  }

  static CollectingSink discarding() {
    return new CollectingSink(batch -> {});
  }

  @Override
  public List<Positioned> stage(List<Positioned> batch, ReadSoFar soFar) {
    soFars.add(soFar);
    List<Positioned> repeats = new ArrayList<>();
    List<AccountCursor> fresh = new ArrayList<>();
    for (Positioned p : batch) {
      if (firstSeen.putIfAbsent(p.account(), p.position()) != null) {
        repeats.add(p);
      } else {
        fresh.add(p.account());
      }
    }
    batches.accept(fresh);
    return repeats;
  }

  @Override
  public long firstPositionOf(AccountCursor account) {
    return firstSeen.getOrDefault(account, -1L);
  }
}

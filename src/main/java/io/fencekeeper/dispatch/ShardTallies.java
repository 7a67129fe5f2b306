package io.fencekeeper.dispatch;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntPredicate;

/**
 * What a node's dispatcher knows of each shard's items: how many are DONE, FAILED, CLOSED or
 * QUARANTINED, counted from the status board's moves (a row's cached status when it is paged in, a
 * settlement afterwards), so each item counts once in its shard. The coordinator adds the latest
 * tally of every shard, whichever node sent it: a shard that moved is counted by its new host,
 * never twice (docs/design.md, "Dispatch on every node").
 */
final class ShardTallies {

  private static final int DONE = 0;
  private static final int FAILED = 1;
  private static final int CLOSED = 2;
  private static final int QUARANTINED = 3;

  private final short[] shardOfSeq;
  private final Map<Integer, long[]> counts = new TreeMap<>();

  ShardTallies(int items) {
    this.shardOfSeq = new short[items];
  }

  /** The item at {@code seq} is in {@code shard} (learned when it is paged in). */
  void place(int seq, int shard) {
    shardOfSeq[seq] = (short) shard;
    counts.computeIfAbsent(shard, s -> new long[4]);
  }

  int shardOf(int seq) {
    return shardOfSeq[seq];
  }

  /** The board moved item {@code seq} from {@code before} to {@code after}. */
  void moved(int seq, byte before, byte after) {
    if (before == after) {
      return;
    }
    long[] c = counts.computeIfAbsent((int) shardOfSeq[seq], s -> new long[4]);
    int from = index(before);
    int to = index(after);
    if (from >= 0) {
      c[from]--;
    }
    if (to >= 0) {
      c[to]++;
    }
  }

  private static int index(byte status) {
    return switch (status) {
      case StatusBoard.DONE -> DONE;
      case StatusBoard.FAILED -> FAILED;
      case StatusBoard.CLOSED -> CLOSED;
      case StatusBoard.QUARANTINED -> QUARANTINED;
      default -> -1;
    };
  }

  /** The tallies of the shards {@code hosted} says this node hosts now. */
  List<DispatchProtocol.ShardTally> of(IntPredicate hosted) {
    List<DispatchProtocol.ShardTally> tallies = new ArrayList<>();
    counts.forEach(
        (shard, c) -> {
          if (hosted.test(shard)) {
            tallies.add(
                new DispatchProtocol.ShardTally(
                    shard, c[DONE], c[FAILED], c[CLOSED], c[QUARANTINED]));
          }
        });
    return tallies;
  }
}

package io.fencekeeper.bench.soak;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The soak's faults, drawn from its seed before the soak starts (scripts/soak.sh): the same seed and
 * settings give the same faults in the same order, so a failure replays. Each fault comes 20-60 s
 * after the previous one has healed, on one node of three drawn at random (any of them: the
 * oldest, which carries the coordinator, included).
 *
 * <p>The lengths keep to what the product promises (docs/cluster.md, "The partition inequality"): a
 * pause is longer than the lease, so the node is downed and its leases are taken over while it
 * sleeps; a partition of up to 30 s outlasts detection + decision too, or ends before them; a
 * database outage lasts 5-15 s; a clock jumps forward by 2-30 s (libfaketime moves the node's wall
 * and monotonic clocks together, and a monotonic clock never goes back, so the clock stays ahead).
 * Pure: no clock, no I/O.
 */
public final class FaultSchedule {

  /** What the nemesis does. */
  public enum Kind {
    /** kill -9 of the node; its supervisor starts it again. */
    KILL,
    /** SIGSTOP for {@code length}, past the lease, then SIGCONT. */
    PAUSE,
    /** The node's cluster port cut from the others' for {@code length}. */
    PARTITION,
    /** The database stopped for {@code length}, then started again. */
    DATABASE,
    /** The node's clock jumps {@code length} ahead. */
    CLOCK;

    /** The name the script and its options use: kill, pause, partition, database, clock. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }

    public static Kind ofLabel(String label) {
      for (Kind kind : values()) {
        if (kind.label().equals(label)) {
          return kind;
        }
      }
      throw new IllegalArgumentException(
          "unknown fault " + label + " (kill, pause, partition, database, clock)");
    }
  }

  /**
   * One fault: {@code gap} after the previous one healed (or after the first night runs), on
   * {@code node} (0 for the database), lasting {@code length} (the jump of a clock; zero for a kill).
   */
  public record Fault(int number, Duration gap, Kind kind, int node, Duration length) {

    /** A line the script reads: number, gap and length in seconds, kind, node. */
    public String line() {
      return number + " " + gap.toSeconds() + " " + kind.label() + " " + node + " "
          + length.toSeconds();
    }
  }

  static final Duration SHORTEST_GAP = Duration.ofSeconds(20);
  static final Duration LONGEST_GAP = Duration.ofSeconds(60);
  static final int NODES = 3;

  private FaultSchedule() {}

  /**
   * Faults enough to fill {@code window} (their gaps and lengths added up), of the {@code kinds}
   * allowed, for a cluster whose lease is {@code lease}.
   */
  public static List<Fault> draw(long seed, Duration window, List<Kind> kinds, Duration lease) {
    if (kinds.isEmpty()) {
      throw new IllegalArgumentException("no fault kind to draw from");
    }
    Random random = new Random(seed);
    List<Fault> faults = new ArrayList<>();
    Duration filled = Duration.ZERO;
    while (filled.compareTo(window) < 0) {
      Duration gap = seconds(random, SHORTEST_GAP.toSeconds(), LONGEST_GAP.toSeconds());
      Kind kind = kinds.get(random.nextInt(kinds.size()));
      int node = 1 + random.nextInt(NODES);
      Duration length =
          switch (kind) {
            case KILL -> Duration.ZERO;
            // past the lease: the others down the node and take its leases over while it sleeps
            case PAUSE -> lease.plus(seconds(random, 1, 10));
            case PARTITION -> seconds(random, 5, 30);
            case DATABASE -> seconds(random, 5, 15);
            case CLOCK -> seconds(random, 2, 30);
          };
      faults.add(new Fault(faults.size() + 1, gap, kind, kind == Kind.DATABASE ? 0 : node, length));
      filled = filled.plus(gap).plus(kind == Kind.CLOCK ? Duration.ZERO : length);
    }
    return faults;
  }

  /** Whole seconds in [low, high]. */
  private static Duration seconds(Random random, long low, long high) {
    return Duration.ofSeconds(low + random.nextInt((int) (high - low + 1)));
  }
}

package io.fencekeeper.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The CPU time of one process and every process below it, read from {@code /proc}: a PostgreSQL
 * server (its postmaster and the backends it forks) or the sim provider's JVM. Or nothing, with the
 * reason ({@link #notMeasured}): a remote database, an H2 inside this JVM.
 *
 * <p>Only this tree counts. The machine is shared: other people's PostgreSQL servers (embedded test
 * databases among them) run beside the bench, and counting every process named {@code postgres}
 * once made the database look twice as expensive as it was.
 *
 * @param proc the {@code /proc} to read (a test passes a directory of its own)
 * @param rootPid the tree's root, or -1 when not measured
 * @param description what the tree is ("postmaster 1234 and its children"), or why it is not
 *     measured
 */
record ProcessCpu(Path proc, long rootPid, String description) {

  /** USER_HZ on Linux: the unit of the times in {@code /proc/<pid>/stat}. */
  static final long CLOCK_TICKS_PER_SECOND = 100;

  static final Path PROC = Path.of("/proc");

  static ProcessCpu tree(long rootPid, String description) {
    return new ProcessCpu(PROC, rootPid, description);
  }

  static ProcessCpu notMeasured(String why) {
    return new ProcessCpu(PROC, -1, why);
  }

  boolean measured() {
    return rootPid > 0;
  }

  /**
   * User plus system time of the root and its live descendants, each with the time of the children
   * it has already reaped ({@code cutime}, {@code cstime}): a backend that served one connection
   * and exited still counts, through its postmaster. In clock ticks; -1 when not measured or the
   * root is gone.
   */
  long ticks() {
    return measured() ? treeTicks(proc, rootPid) : -1;
  }

  /** One line of {@code /proc/<pid>/stat}, the fields the bench needs. */
  record Stat(long pid, String command, long parentPid, long ticks, long startTicks) {

    /**
     * Parses {@code pid (comm) state ppid ...}. The command may contain spaces and parentheses, so
     * the fields are counted from the last ')'.
     */
    static Stat parse(String line) {
      int open = line.indexOf('(');
      int close = line.lastIndexOf(')');
      if (open < 0 || close < open) {
        throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + line);
      }
      long pid = Long.parseLong(line.substring(0, open).trim());
      String[] f = line.substring(close + 2).trim().split(" +");
      // after ") ": [0] state, [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime,
      // [19] starttime (fields 3, 4, 14-17 and 22 of proc(5))
      long ticks =
          Long.parseLong(f[11])
              + Long.parseLong(f[12])
              + Long.parseLong(f[13])
              + Long.parseLong(f[14]);
      return new Stat(
          pid, line.substring(open + 1, close), Long.parseLong(f[1]), ticks, Long.parseLong(f[19]));
    }
  }

  /** The stat of one process, or null if it does not exist (or vanished while read). */
  static Stat stat(Path proc, long pid) {
    try {
      return Stat.parse(Files.readString(proc.resolve(Long.toString(pid)).resolve("stat")));
    } catch (IOException | RuntimeException gone) {
      return null;
    }
  }

  static long treeTicks(Path proc, long rootPid) {
    Map<Long, List<Stat>> children = new HashMap<>();
    Stat root = null;
    for (Stat s : all(proc)) {
      children.computeIfAbsent(s.parentPid(), k -> new ArrayList<>()).add(s);
      if (s.pid() == rootPid) {
        root = s;
      }
    }
    if (root == null) {
      return -1;
    }
    long ticks = 0;
    Deque<Stat> todo = new ArrayDeque<>(List.of(root));
    while (!todo.isEmpty()) {
      Stat s = todo.pop();
      ticks += s.ticks();
      todo.addAll(children.getOrDefault(s.pid(), List.of()));
    }
    return ticks;
  }

  private static List<Stat> all(Path proc) {
    List<Stat> stats = new ArrayList<>();
    try (Stream<Path> entries = Files.list(proc)) {
      entries
          .map(p -> p.getFileName().toString())
          .filter(name -> !name.isEmpty() && name.chars().allMatch(Character::isDigit))
          .forEach(
              pid -> {
                Stat s = stat(proc, Long.parseLong(pid));
                if (s != null) {
                  stats.add(s);
                }
              });
    } catch (IOException e) {
      return List.of();
    }
    return stats;
  }

  /**
   * Busy time of the whole machine in clock ticks (user, nice, system, irq, softirq, steal of the
   * {@code cpu} line of {@code /proc/stat}; idle and iowait left out): with this JVM's and the
   * measured trees' time taken off, what other people's processes used meanwhile. -1 without it.
   */
  static long machineBusyTicks(Path proc) {
    try (Stream<String> lines = Files.lines(proc.resolve("stat"))) {
      String cpu = lines.filter(l -> l.startsWith("cpu ")).findFirst().orElse(null);
      if (cpu == null) {
        return -1;
      }
      String[] f = cpu.trim().split(" +");
      // cpu user nice system idle iowait irq softirq steal ...
      return Long.parseLong(f[1])
          + Long.parseLong(f[2])
          + Long.parseLong(f[3])
          + Long.parseLong(f[6])
          + Long.parseLong(f[7])
          + Long.parseLong(f[8]);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * When the machine booted, in epoch seconds ({@code btime} of {@code /proc/stat}); -1 if unknown.
   */
  static long bootEpochSeconds(Path proc) {
    try (Stream<String> lines = Files.lines(proc.resolve("stat"))) {
      return lines
          .filter(l -> l.startsWith("btime "))
          .mapToLong(l -> Long.parseLong(l.substring(6).trim()))
          .findFirst()
          .orElse(-1);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}

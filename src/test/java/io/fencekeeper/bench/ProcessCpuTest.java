package io.fencekeeper.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The database's CPU is its server's process tree, not every process of that name: read from a
 * /proc laid out by the test, with another PostgreSQL server beside the bench's.
 */
class ProcessCpuTest {

  @TempDir Path proc;

  /** Writes /proc/<pid>/stat with the fields the bench reads; the rest are zeros. */
  static void process(
      Path proc,
      long pid,
      String command,
      long ppid,
      long utime,
      long stime,
      long cutime,
      long cstime,
      long startTicks)
      throws IOException {
    StringBuilder line = new StringBuilder();
    line.append(pid).append(" (").append(command).append(") S ").append(ppid);
    // fields 5..13 of proc(5): pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    line.append(" 0 0 0 0 0 0 0 0 0");
    line.append(' ').append(utime).append(' ').append(stime);
    line.append(' ').append(cutime).append(' ').append(cstime);
    // priority nice num_threads itrealvalue, then starttime, then a few more
    line.append(" 20 0 1 0 ").append(startTicks).append(" 0 0 0\n");
    Path dir = Files.createDirectories(proc.resolve(Long.toString(pid)));
    Files.writeString(dir.resolve("stat"), line);
  }

  @Test
  void theServersTreeCountsItsBackendsAndWhatItReapedButNotAnotherServer() throws IOException {
    // the bench's server: postmaster 100, which has reaped exited backends (cutime, cstime)
    process(proc, 100, "postgres", 1, 10, 5, 30, 20, 500);
    process(proc, 101, "postgres", 100, 7, 3, 0, 0, 600);
    process(proc, 102, "postgres", 100, 4, 1, 0, 0, 700);
    process(proc, 103, "postgres", 101, 2, 0, 0, 0, 800);
    // someone else's embedded PostgreSQL, busy: must not count
    process(proc, 200, "postgres", 1, 1000, 500, 0, 0, 400);
    process(proc, 201, "postgres", 200, 4000, 900, 0, 0, 450);
    process(proc, 300, "java", 1, 77, 0, 0, 0, 300);

    assertEquals(10 + 5 + 30 + 20 + 7 + 3 + 4 + 1 + 2, ProcessCpu.treeTicks(proc, 100));
    assertEquals(1000 + 500 + 4000 + 900, ProcessCpu.treeTicks(proc, 200));
    assertEquals(2, ProcessCpu.treeTicks(proc, 103));
    assertEquals(-1, ProcessCpu.treeTicks(proc, 999), "a root that is gone is not zero CPU");
  }

  @Test
  void notMeasuredHasNoTicks() {
    ProcessCpu none = ProcessCpu.notMeasured("not measured: remote");
    assertFalse(none.measured());
    assertEquals(-1, none.ticks());
    assertTrue(new ProcessCpu(proc, 100, "x").measured());
  }

  @Test
  void aCommandWithSpacesAndParenthesesIsParsedFromTheLastParenthesis() {
    ProcessCpu.Stat s =
        ProcessCpu.Stat.parse(
            "4242 (odd) name (x)) S 17 0 0 0 0 0 0 0 0 0 11 12 13 14 20 0 1 0 9999 0 0 0");
    assertEquals(4242, s.pid());
    assertEquals("odd) name (x)", s.command());
    assertEquals(17, s.parentPid());
    assertEquals(11 + 12 + 13 + 14, s.ticks());
    assertEquals(9999, s.startTicks());
  }

  @Test
  void machineBusyTimeLeavesIdleAndIowaitOut() throws IOException {
    Files.writeString(
        proc.resolve("stat"),
        "cpu  100 2 30 9000 500 4 6 8 0 0\ncpu0 50 1 15 4500 250 2 3 4 0 0\nbtime 1700000000\n");
    assertEquals(100 + 2 + 30 + 4 + 6 + 8, ProcessCpu.machineBusyTicks(proc));
    assertEquals(1700000000L, ProcessCpu.bootEpochSeconds(proc));
  }
}

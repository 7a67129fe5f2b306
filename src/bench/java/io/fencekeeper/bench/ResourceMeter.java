package io.fencekeeper.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * What one phase of the bench cost this process: wall time, CPU time (this JVM, and separately the
 * local PostgreSQL server processes when there are any), the heap's high-water mark (the pools'
 * peak usage, and the largest heap still in use right after a collection: the live set).
 */
final class ResourceMeter implements AutoCloseable {

  record Measured(
      double wallSeconds,
      double cpuSeconds,
      double databaseCpuSeconds,
      long heapPeakBytes,
      long liveHeapAfterGcPeakBytes) {}

  private static final long CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

  private final long startedNanos;
  private final long startedCpuNanos;
  private final long startedDbTicks;
  private final AtomicLong liveAfterGc = new AtomicLong();
  private final List<Runnable> unsubscribe = new ArrayList<>();

  private ResourceMeter() {
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        pool.resetPeakUsage();
      }
    }
    NotificationListener listener =
        (notification, handback) -> {
          if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(
              notification.getType())) {
            var info =
                GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
            long used =
                info.getGcInfo().getMemoryUsageAfterGc().entrySet().stream()
                    .filter(e -> isHeap(e.getKey()))
                    .mapToLong(e -> e.getValue().getUsed())
                    .sum();
            liveAfterGc.accumulateAndGet(used, Math::max);
          }
        };
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof NotificationEmitter emitter) {
        emitter.addNotificationListener(listener, null, null);
        unsubscribe.add(
            () -> {
              try {
                emitter.removeNotificationListener(listener);
              } catch (javax.management.ListenerNotFoundException ignored) {
                // already gone
              }
            });
      }
    }
    this.startedDbTicks = databaseCpuTicks();
    this.startedCpuNanos = processCpuNanos();
    this.startedNanos = System.nanoTime();
  }

  static ResourceMeter start() {
    return new ResourceMeter();
  }

  Measured stop() {
    double wall = (System.nanoTime() - startedNanos) / 1e9;
    double cpu = (processCpuNanos() - startedCpuNanos) / 1e9;
    double dbCpu = (databaseCpuTicks() - startedDbTicks) / (double) CLOCK_TICKS_PER_SECOND;
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        MemoryUsage usage = pool.getPeakUsage();
        peak += usage == null ? 0 : usage.getUsed();
      }
    }
    return new Measured(wall, cpu, dbCpu, peak, liveAfterGc.get());
  }

  @Override
  public void close() {
    unsubscribe.forEach(Runnable::run);
  }

  private static boolean isHeap(String poolName) {
    return ManagementFactory.getMemoryPoolMXBeans().stream()
        .anyMatch(p -> p.getName().equals(poolName) && p.getType() == MemoryType.HEAP);
  }

  private static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return 0;
  }

  /**
   * User plus system time of every live process named {@code postgres} on this machine, in clock
   * ticks: the database's share of the work, which process CPU of the JVM does not include.
   * Backends that exit during the phase take their ticks with them, so this is a lower bound.
   */
  static long databaseCpuTicks() {
    Path proc = Path.of("/proc");
    if (!Files.isDirectory(proc)) {
      return 0;
    }
    long ticks = 0;
    try (Stream<Path> entries = Files.list(proc)) {
      for (Path dir : (Iterable<Path>) entries::iterator) {
        String pid = dir.getFileName().toString();
        if (!pid.chars().allMatch(Character::isDigit)) {
          continue;
        }
        try {
          String stat = Files.readString(dir.resolve("stat"));
          int open = stat.indexOf('(');
          int close = stat.lastIndexOf(')');
          if (open < 0 || close < 0 || !stat.substring(open + 1, close).equals("postgres")) {
            continue;
          }
          String[] fields = stat.substring(close + 2).split(" ");
          // fields[11] and [12] are utime and stime (fields 14 and 15 of proc(5))
          ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        } catch (IOException | RuntimeException vanished) {
          // the process ended while we looked
        }
      }
    } catch (IOException e) {
      return 0;
    }
    return ticks;
  }
}

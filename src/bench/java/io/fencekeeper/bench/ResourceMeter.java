package io.fencekeeper.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * What one phase of the bench cost: wall time; CPU time of this JVM, of the bench's own PostgreSQL
 * server (its postmaster's process tree, {@link ProcessCpu}) and of the sim provider's process when
 * there is one; what the rest of the machine used meanwhile (the shared machine's noise), with the
 * load average; and the heap's high-water mark (the pools' peak usage, and the largest heap still
 * in use right after a collection: the live set).
 */
final class ResourceMeter implements AutoCloseable {

  /**
   * @param cpuSeconds this JVM's CPU time
   * @param databaseCpuSeconds the bench's PostgreSQL server's CPU time; null when not measured (a
   *     remote server; H2, whose work is in {@code cpuSeconds})
   * @param simCpuSeconds the sim provider process's CPU time; null without one
   * @param foreignCores CPU the machine spent outside this JVM and the measured processes, in cores
   *     on average over the phase (other people's work, and a database not measured here); null
   *     without /proc
   * @param loadAverage the one-minute load average at the start and at the end of the phase
   */
  record Measured(
      double wallSeconds,
      double cpuSeconds,
      Double databaseCpuSeconds,
      Double simCpuSeconds,
      Double foreignCores,
      double[] loadAverage,
      long heapPeakBytes,
      long liveHeapAfterGcPeakBytes) {}

  private final ProcessCpu database;
  private final ProcessCpu sim;
  private final double startedLoad;
  private final long startedNanos;
  private final long startedCpuNanos;
  private final long startedDbTicks;
  private final long startedSimTicks;
  private final long startedMachineTicks;
  private final AtomicLong liveAfterGc = new AtomicLong();
  private final List<Runnable> unsubscribe = new ArrayList<>();

  private ResourceMeter(ProcessCpu database, ProcessCpu sim) {
    this.database = database;
    this.sim = sim;
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
    this.startedLoad = loadAverage();
    this.startedMachineTicks = ProcessCpu.machineBusyTicks(ProcessCpu.PROC);
    this.startedDbTicks = database.ticks();
    this.startedSimTicks = sim.ticks();
    this.startedCpuNanos = processCpuNanos();
    this.startedNanos = System.nanoTime();
  }

  /** Meters this JVM and the database server's processes. */
  static ResourceMeter start(ProcessCpu database) {
    return new ResourceMeter(database, ProcessCpu.notMeasured("no sim process"));
  }

  /** Meters this JVM, the database server's processes and the sim provider's process. */
  static ResourceMeter start(ProcessCpu database, ProcessCpu sim) {
    return new ResourceMeter(database, sim);
  }

  Measured stop() {
    double wall = (System.nanoTime() - startedNanos) / 1e9;
    double cpu = (processCpuNanos() - startedCpuNanos) / 1e9;
    Double dbCpu = seconds(startedDbTicks, database.ticks());
    Double simCpu = seconds(startedSimTicks, sim.ticks());
    long machineTicks = ProcessCpu.machineBusyTicks(ProcessCpu.PROC);
    Double foreign =
        startedMachineTicks < 0 || machineTicks < 0
            ? null
            : ((machineTicks - startedMachineTicks) / (double) ProcessCpu.CLOCK_TICKS_PER_SECOND
                    - cpu
                    - (dbCpu == null ? 0 : dbCpu)
                    - (simCpu == null ? 0 : simCpu))
                / wall;
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        MemoryUsage usage = pool.getPeakUsage();
        peak += usage == null ? 0 : usage.getUsed();
      }
    }
    return new Measured(
        wall,
        cpu,
        dbCpu,
        simCpu,
        foreign,
        new double[] {startedLoad, loadAverage()},
        peak,
        liveAfterGc.get());
  }

  /** Seconds between two tick counts of one process tree; null if either is missing. */
  private static Double seconds(long startTicks, long endTicks) {
    return startTicks < 0 || endTicks < 0
        ? null
        : (endTicks - startTicks) / (double) ProcessCpu.CLOCK_TICKS_PER_SECOND;
  }

  private static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
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
}

package io.fencekeeper.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU per unit of work (an item, a provider call) of Fencekeeper beside db-scheduler's, for each
 * place the CPU is spent (this JVM, the database server, the sim provider), each with its own ratio
 * (Fencekeeper over db-scheduler). A place not measured (a remote database, H2 inside the JVM, no
 * sim process) has nulls, printed "n/m".
 */
final class CpuPer {

  private CpuPer() {}

  /** Microseconds per unit; null when not measured or there were no units. */
  static Double micros(Double seconds, long units) {
    return seconds == null || units <= 0 ? null : 1e6 * seconds / units;
  }

  /** Microseconds per unit as the summary prints them. */
  static String show(Double seconds, long units) {
    return show("%.0f", micros(seconds, units));
  }

  static String show(String pattern, Object value) {
    return value == null ? "n/m" : String.format(pattern, value);
  }

  /**
   * {@code {"jvm": {"fencekeeperMicros", "dbSchedulerMicros", "ratio"}, "database": {...}}}, and
   * {@code "sim"} when {@code withSim}.
   */
  static Map<String, Map<String, Double>> compare(
      ResourceMeter.Measured fk,
      long fkUnits,
      ResourceMeter.Measured dbs,
      long dbsUnits,
      boolean withSim) {
    Map<String, Map<String, Double>> m = new LinkedHashMap<>();
    m.put("jvm", pair(micros(fk.cpuSeconds(), fkUnits), micros(dbs.cpuSeconds(), dbsUnits)));
    m.put(
        "database",
        pair(micros(fk.databaseCpuSeconds(), fkUnits), micros(dbs.databaseCpuSeconds(), dbsUnits)));
    if (withSim) {
      m.put(
          "sim", pair(micros(fk.simCpuSeconds(), fkUnits), micros(dbs.simCpuSeconds(), dbsUnits)));
    }
    return m;
  }

  /** {@code cpu per item: jvm Fencekeeper 300 µs vs db-scheduler 40 µs (ratio 7.50); ...}. */
  static String line(String unit, Map<String, Map<String, Double>> compared) {
    StringBuilder line = new StringBuilder("cpu per " + unit + ":");
    String separator = " ";
    for (Map.Entry<String, Map<String, Double>> place : compared.entrySet()) {
      Map<String, Double> p = place.getValue();
      line.append(separator)
          .append(place.getKey())
          .append(" Fencekeeper ")
          .append(show("%.0f", p.get("fencekeeperMicros")))
          .append(" µs vs db-scheduler ")
          .append(show("%.0f", p.get("dbSchedulerMicros")))
          .append(" µs (ratio ")
          .append(show("%.2f", p.get("ratio")))
          .append(")");
      separator = "; ";
    }
    return line.toString();
  }

  private static Map<String, Double> pair(Double fencekeeper, Double dbScheduler) {
    Map<String, Double> p = new LinkedHashMap<>();
    p.put("fencekeeperMicros", fencekeeper);
    p.put("dbSchedulerMicros", dbScheduler);
    p.put(
        "ratio",
        fencekeeper == null || dbScheduler == null || dbScheduler == 0
            ? null
            : fencekeeper / dbScheduler);
    return p;
  }
}

package io.fencekeeper.bench;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the PostgreSQL server the bench talks to among this machine's processes: the backend that
 * serves our connection names its pid ({@code pg_backend_pid()}), its parent is the postmaster, and
 * the postmaster's start time must be the one the server reports ({@code
 * pg_postmaster_start_time()}), which rules out a pid of another namespace (a server in a
 * container) that happens to exist here too. A server on another host is not measured.
 */
final class PostmasterLocator {

  /** How far the postmaster's process start may lie from the start time the server reports. */
  static final double START_TOLERANCE_SECONDS = 10;

  private PostmasterLocator() {}

  static ProcessCpu locate(Connection connection, String jdbcUrl) {
    List<String> remote = hosts(jdbcUrl).stream().filter(h -> !isLocal(h)).toList();
    if (!remote.isEmpty()) {
      return ProcessCpu.notMeasured("not measured: the server is on another host " + remote);
    }
    try (Statement s = connection.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT pg_backend_pid(), extract(epoch FROM pg_postmaster_start_time())")) {
      rs.next();
      return locate(ProcessCpu.PROC, rs.getLong(1), rs.getDouble(2));
    } catch (SQLException e) {
      return ProcessCpu.notMeasured("not measured: " + e.getMessage());
    }
  }

  /** The postmaster above {@code backendPid}, if it is the server that started at that time. */
  static ProcessCpu locate(Path proc, long backendPid, double postmasterStartEpochSeconds) {
    ProcessCpu.Stat backend = ProcessCpu.stat(proc, backendPid);
    if (backend == null || !backend.command().equals("postgres")) {
      return ProcessCpu.notMeasured(
          "not measured: our backend (pid "
              + backendPid
              + ") is not a postgres process on this machine (another PID namespace?)");
    }
    ProcessCpu.Stat postmaster = ProcessCpu.stat(proc, backend.parentPid());
    if (postmaster == null || !postmaster.command().equals("postgres")) {
      return ProcessCpu.notMeasured(
          "not measured: the parent of backend " + backendPid + " is not a postmaster");
    }
    long boot = ProcessCpu.bootEpochSeconds(proc);
    double started = boot + postmaster.startTicks() / (double) ProcessCpu.CLOCK_TICKS_PER_SECOND;
    if (boot < 0 || Math.abs(started - postmasterStartEpochSeconds) > START_TOLERANCE_SECONDS) {
      return ProcessCpu.notMeasured(
          "not measured: process "
              + postmaster.pid()
              + " did not start when the server says its postmaster did");
    }
    return new ProcessCpu(
        proc, postmaster.pid(), "postmaster " + postmaster.pid() + " and its children");
  }

  /**
   * The hosts of a {@code jdbc:postgresql:} URL: {@code //host[:port][,host[:port]]/db}; none given
   * ({@code jdbc:postgresql:db}, {@code jdbc:postgresql:///db}) means localhost.
   */
  static List<String> hosts(String jdbcUrl) {
    String prefix = "jdbc:postgresql:";
    if (!jdbcUrl.startsWith(prefix) || !jdbcUrl.startsWith("//", prefix.length())) {
      return List.of("localhost");
    }
    String rest = jdbcUrl.substring(prefix.length() + 2);
    int end = rest.length();
    for (char c : new char[] {'/', '?'}) {
      int i = rest.indexOf(c);
      if (i >= 0) {
        end = Math.min(end, i);
      }
    }
    List<String> hosts = new ArrayList<>();
    for (String hostPort : rest.substring(0, end).split(",")) {
      String host;
      if (hostPort.startsWith("[")) {
        host = hostPort.substring(1, Math.max(1, hostPort.indexOf(']')));
      } else {
        int colon = hostPort.indexOf(':');
        host = colon >= 0 ? hostPort.substring(0, colon) : hostPort;
      }
      hosts.add(host.isEmpty() ? "localhost" : host);
    }
    return hosts;
  }

  /** Loopback, or an address of one of this machine's interfaces. */
  static boolean isLocal(String host) {
    try {
      for (InetAddress address : InetAddress.getAllByName(host)) {
        if (!address.isLoopbackAddress()
            && !address.isAnyLocalAddress()
            && NetworkInterface.getByInetAddress(address) == null) {
          return false;
        }
      }
      return true;
    } catch (UnknownHostException | SocketException e) {
      return false;
    }
  }
}

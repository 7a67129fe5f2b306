package io.fencekeeper.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * Ports for a child process to bind later, which the test must know first (a node's cluster port is
 * its seed address). A port the kernel hands out for {@code bind(0)} and that is closed again can
 * be handed to another fork's socket before the child binds it (a CI run lost a node to "Address
 * already in use" so): these come from below the kernel's ephemeral range (32768 and up on Linux),
 * which no {@code bind(0)} of the suite's own sockets uses, from a block of its own for each fork
 * of the suite ({@code fencekeeper.test.fork}, set from Surefire's fork number), and each is
 * checked free before it is handed out.
 */
public final class FreePorts {

  private static final int FIRST = 20_000;
  private static final int PER_FORK = 1_000;
  private static int next = -1;

  private FreePorts() {}

  /** A loopback port free now, never handed out before in this JVM. */
  public static synchronized int next() throws IOException {
    int fork = Integer.getInteger("fencekeeper.test.fork", 0) % 12;
    int first = FIRST + fork * PER_FORK;
    if (next < 0) {
      next = first;
    }
    for (int tried = 0; tried < PER_FORK; tried++) {
      int port = next;
      next = next + 1 < first + PER_FORK ? next + 1 : first;
      try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return port;
      } catch (IOException taken) {
        // a leftover of an earlier run, or another program's: try the next one
      }
    }
    throw new IOException("no free port in " + first + "-" + (first + PER_FORK - 1));
  }
}

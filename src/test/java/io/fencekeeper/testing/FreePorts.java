package io.fencekeeper.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Ports for a child process to bind later, which the test must know first (a node's cluster port is
 * its seed address). A port the kernel hands out for {@code bind(0)} and that is closed again can
 * be handed to another fork's socket before the child binds it (a node was lost to "Address already
 * in use" so). These come from below the kernel's ephemeral range (32768 and up on Linux), which no
 * {@code bind(0)} of the suite's own sockets uses, from a block of ports that this test JVM holds a
 * lock on for its whole life (the operating system's lock on a file of the build, dropped when the
 * JVM ends however it ends), so no two of the suite's forks hand out the same port; each port is
 * also checked free before it is handed out.
 */
public final class FreePorts {

  private static final int FIRST = 20_000;
  private static final int PER_BLOCK = 500;
  private static final int BLOCKS = 24;
  private static final Path LOCKS = Path.of("target", "port-blocks").toAbsolutePath();

  private static int first = -1;
  private static int next;
  private static FileLock held; // kept, never released: the block is this JVM's until it ends

  private FreePorts() {}

  /** A loopback port free now, never handed out before by any fork of this build. */
  public static synchronized int next() throws IOException {
    if (first < 0) {
      first = FIRST + claimBlock() * PER_BLOCK;
      next = first;
    }
    for (int tried = 0; tried < PER_BLOCK; tried++) {
      int port = next;
      next = next + 1 < first + PER_BLOCK ? next + 1 : first;
      try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return port;
      } catch (IOException taken) {
        // a leftover of an earlier run, or another program's: try the next one
      }
    }
    throw new IOException("no free port in " + first + "-" + (first + PER_BLOCK - 1));
  }

  private static int claimBlock() throws IOException {
    Files.createDirectories(LOCKS);
    for (int block = 0; block < BLOCKS; block++) {
      FileChannel channel =
          FileChannel.open(
              LOCKS.resolve(block + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock = channel.tryLock();
      if (lock != null) {
        held = lock;
        return block;
      }
      channel.close();
    }
    throw new IOException("every block of ports under " + LOCKS + " is held by another JVM");
  }
}

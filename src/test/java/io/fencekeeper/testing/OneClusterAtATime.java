package io.fencekeeper.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Holds a lock on a file of the build for the whole test class, so that of the suite's forked test
 * JVMs only one at a time runs a {@link ClusterProcessTest} or a {@link BrowserTest}: a cluster of
 * child JVMs or a browser. Those are the tests whose timings follow from the partition inequality
 * and the lease, and two of them at once on two cores would be load no product promise is sized
 * for; in-JVM tests run beside them in the other forks. The lock is the operating system's, so a
 * fork that dies mid-class releases it.
 */
public final class OneClusterAtATime implements BeforeAllCallback, AfterAllCallback {

  /** One file for every fork of a build: {@code target/}, the working directory's. */
  static final Path LOCK_FILE = Path.of("target", "one-cluster-at-a-time.lock");

  private static final ExtensionContext.Namespace HELD =
      ExtensionContext.Namespace.create(OneClusterAtATime.class);

  @Override
  public void beforeAll(ExtensionContext context) {
    try {
      Files.createDirectories(LOCK_FILE.toAbsolutePath().getParent());
      FileChannel channel =
          FileChannel.open(LOCK_FILE, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock = channel.lock(); // waits while another fork's class holds it
      context.getStore(HELD).put("lock", lock);
    } catch (IOException e) {
      throw new UncheckedIOException("could not take " + LOCK_FILE, e);
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    FileLock lock = context.getStore(HELD).remove("lock", FileLock.class);
    if (lock != null) {
      lock.release();
      lock.channel().close();
    }
  }
}

package io.fencekeeper;

import java.util.concurrent.ThreadFactory;

/** Threads of a node's own that must never keep its JVM alive once everything else has stopped. */
public final class DaemonThreads {

  private DaemonThreads() {}

  /** Daemon threads, all named {@code name}: the threads of one executor that does one job. */
  public static ThreadFactory named(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, name);
      thread.setDaemon(true);
      return thread;
    };
  }
}

package io.fencekeeper.bench;

import picocli.CommandLine;

/**
 * The benchmark's own jar ({@code target/fencekeeper-bench.jar}): the bench needs db-scheduler as
 * its yardstick, and the product jar must not carry a benchmark peer.
 */
public final class BenchMain {

  private BenchMain() {}

  public static void main(String[] args) {
    // as in the product's Main: on two cores the common pool would otherwise have one thread
    if (System.getProperty("java.util.concurrent.ForkJoinPool.common.parallelism") == null) {
      System.setProperty(
          "java.util.concurrent.ForkJoinPool.common.parallelism",
          String.valueOf(Math.max(4, Runtime.getRuntime().availableProcessors())));
    }
    System.exit(commandLine().execute(args));
  }

  public static CommandLine commandLine() {
    return new CommandLine(new BenchCommand());
  }
}

package io.fencekeeper.cli;

import io.fencekeeper.provider.sim.SimProviderCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ScopeType;

/**
 * The one runnable jar: every Fencekeeper role is a sub-command. The help and version options are
 * inherited, so every sub-command takes {@code -h/--help} and {@code -V/--version} too.
 */
@Command(
    name = "fencekeeper",
    mixinStandardHelpOptions = true,
    scope = ScopeType.INHERIT,
    version = "fencekeeper 0.1.0",
    description = "Lease-fenced nightly reconciliation runs on a Pekko cluster.",
    subcommands = {
      RunCommand.class,
      ServeCommand.class,
      SimProviderCommand.class,
      StatusCommand.class,
      AuditCommand.class,
      ReportCommand.class,
      VerifyCommand.class,
      ArchiveCommand.class,
      ProviderCheckCommand.class
    })
public final class Main implements Runnable {

  public static void main(String[] args) {
    // on two cores the common pool has parallelism 1 and the JDK falls back to a thread per
    // async task for anything that still lands there; give it real threads
    if (System.getProperty("java.util.concurrent.ForkJoinPool.common.parallelism") == null) {
      System.setProperty(
          "java.util.concurrent.ForkJoinPool.common.parallelism",
          String.valueOf(Math.max(4, Runtime.getRuntime().availableProcessors())));
    }
    System.exit(commandLine().execute(args));
  }

  public static CommandLine commandLine() {
    return new CommandLine(new Main());
  }

  @Override
  public void run() {
    CommandLine.usage(this, System.out);
  }
}

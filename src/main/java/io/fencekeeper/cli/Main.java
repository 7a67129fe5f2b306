package io.fencekeeper.cli;

import io.fencekeeper.provider.sim.SimProviderCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The one runnable jar: every Fencekeeper role is a sub-command. */
@Command(
    name = "fencekeeper",
    mixinStandardHelpOptions = true,
    version = "fencekeeper 0.1.0",
    description = "Lease-fenced nightly reconciliation runs on a Pekko cluster.",
    subcommands = {RunCommand.class, ServeCommand.class, SimProviderCommand.class})
public final class Main implements Runnable {

  public static void main(String[] args) {
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

package io.fencekeeper.bench.soak;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The soak's Java half (scripts/soak.sh runs it from {@code target/fencekeeper-bench.jar}): {@code
 * schedule} prints the faults a seed gives, {@code check} makes the checks once the nights have
 * ended, {@code item} prints an item's journal (what a finding's item went through). Exit codes: 0 every check held, 1 one did not, 64 a usage error, 70 the checks could not
 * be made (a node, the sim or the database did not answer).
 */
@Command(
    name = "soak",
    mixinStandardHelpOptions = true,
    subcommands = {SoakMain.Schedule.class, SoakMain.Check.class, SoakMain.Item.class},
    description = "The soak's fault schedule, end checks and item journals (scripts/soak.sh).")
public final class SoakMain implements Callable<Integer> {

  static final int CHECK_FAILED = 1;
  static final int USAGE = 64;
  static final int COULD_NOT_CHECK = 70;

  public static void main(String[] args) {
    System.exit(new CommandLine(new SoakMain()).execute(args));
  }

  @Override
  public Integer call() {
    CommandLine.usage(this, System.err);
    return USAGE;
  }

  /** The soak's PostgreSQL, where the items' journal is read. */
  static final class Journal {
    @Option(names = "--db-url", required = true)
    String url;

    @Option(names = "--db-user", required = true)
    String user;

    @Option(names = "--db-password", defaultValue = "")
    String password;
  }

  @Command(name = "schedule", description = "Print the faults of a seed, one per line.")
  static final class Schedule implements Callable<Integer> {
    @Option(names = "--seed", required = true)
    long seed;

    @Option(names = "--minutes", required = true, description = "the window the faults fill")
    int minutes;

    @Option(
        names = "--faults",
        split = ",",
        defaultValue = "kill,pause,partition,database,clock",
        description = "the kinds drawn from (default: ${DEFAULT-VALUE})")
    List<String> faults;

    @Option(names = "--lease-seconds", required = true, description = "the cluster's lease")
    int leaseSeconds;

    @Override
    public Integer call() {
      List<FaultSchedule.Kind> kinds = new ArrayList<>();
      try {
        faults.forEach(label -> kinds.add(FaultSchedule.Kind.ofLabel(label.trim())));
      } catch (IllegalArgumentException e) {
        System.err.println(e.getMessage());
        return USAGE;
      }
      FaultSchedule.draw(
              seed,
              Duration.ofMinutes(minutes),
              kinds.stream().distinct().toList(),
              Duration.ofSeconds(leaseSeconds))
          .forEach(fault -> System.out.println(fault.line()));
      return 0;
    }
  }

  @Command(
      name = "check",
      description = "Check the nights of a soak against the journal and the provider's ledger.")
  static final class Check implements Callable<Integer> {
    @CommandLine.Mixin Journal journal;

    @Option(names = "--sim-url", required = true)
    URI simUrl;

    @Option(
        names = "--api-url",
        required = true,
        split = ",",
        description = "the nodes' HTTP APIs, tried in turn")
    List<URI> apiUrls;

    @Option(
        names = "--nights",
        required = true,
        description = "the script's nights file: number, run id, CSV, end seen (epoch ms)")
    Path nights;

    @Option(
        names = "--clock-ahead-seconds",
        defaultValue = "0",
        description = "the most the soak moved a node's clock ahead")
    long clockAheadSeconds;

    @Override
    public Integer call() {
      try {
        List<Night> read =
            Files.readAllLines(nights, StandardCharsets.UTF_8).stream()
                .filter(line -> !line.isBlank())
                .map(Night::parse)
                .toList();
        boolean held =
            new SoakCheck(
                    journal.url,
                    journal.user,
                    journal.password,
                    simUrl,
                    apiUrls,
                    Duration.ofSeconds(clockAheadSeconds))
                .run(read, System.out);
        return held ? 0 : CHECK_FAILED;
      } catch (Exception e) {
        System.out.println("the checks could not be made: " + e);
        return COULD_NOT_CHECK;
      }
    }
  }

  @Command(
      name = "item",
      description = "Print the journal of items: each event with the database's row, as JSON.")
  static final class Item implements Callable<Integer> {
    @CommandLine.Mixin Journal journal;

    @CommandLine.Parameters(paramLabel = "ITEM", description = "item ids: job/date/account/cursor")
    List<String> items;

    @Override
    public Integer call() {
      try {
        for (String item : items) {
          System.out.println(item);
          ItemJournal.print(journal.url, journal.user, journal.password, item, System.out);
        }
        return 0;
      } catch (Exception e) {
        System.out.println("the journal could not be read: " + e);
        return COULD_NOT_CHECK;
      }
    }
  }
}

package io.fencekeeper.cli;

import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.provider.factory.ProviderSettings;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunService;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.run.scope.ScopeException;
import io.fencekeeper.verify.VerifySettings;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The main job on the embedded default: one node on an H2 file with the bundled simulated provider,
 * one run from a CSV of accounts, a live progress line, a final report, and an exit code that says
 * how the run ended (0 SUCCEEDED, 2 PARTIAL, 3 FAILED or CANCELLED), or, with {@code --verify},
 * that its verification did not agree (4 DISCREPANCIES, 5 INCOMPLETE, as {@code verify}): a journal
 * that misses an effect outweighs the run's state.
 */
@Command(
    name = "run",
    description =
        "Run one nightly job for one business date on an embedded node, or upload it to a"
            + " running node with --url, and report.")
public final class RunCommand implements Callable<Integer> {

  @Option(names = "--job", required = true, description = "job name, e.g. payment-reconciliation")
  String job;

  @Option(names = "--date", required = true, description = "business date, yyyy-MM-dd")
  LocalDate date;

  @Option(names = "--accounts", required = true, description = "CSV of accountId,cursor")
  Path accounts;

  @Option(
      names = "--deadline",
      description = "deadline instant (ISO-8601); default: now + --deadline-in for a new run")
  Instant deadline;

  @Option(
      names = "--deadline-in",
      defaultValue = "PT1H",
      description =
          "deadline from now for a new run, ISO-8601 duration (default: ${DEFAULT-VALUE})")
  Duration deadlineIn;

  @Option(names = "--max-attempts", defaultValue = "5")
  int maxAttempts;

  @Option(names = "--max-failed-items", defaultValue = "10")
  int maxFailedItems;

  @Mixin ProviderOptions provider = new ProviderOptions();

  @Option(names = "--workers", description = "worker pool size (default: from configuration)")
  Integer workers;

  @Option(names = "--data-dir", description = "where the embedded H2 database lives")
  Path dataDir;

  @Option(
      names = "--verify",
      description =
          "when the run ends, verify it against its provider and put the verdict in the report;"
              + " exit 4 (DISCREPANCIES) or 5 (INCOMPLETE) when it does not agree"
              + " (fencekeeper.verify.when-run-ends; docs/verification.md)")
  boolean verify;

  @Option(
      names = {"-c", "--config"},
      description = "HOCON file (default: the bundled conf/fencekeeper.conf)")
  Path config;

  @Option(
      names = "--url",
      description =
          "a running node's HTTP API: upload --accounts to it (POST /api/runs, text/csv) and"
              + " watch the run there instead of starting an embedded node")
  URI url;

  @Option(
      names = "--token",
      defaultValue = "${FENCEKEEPER_API_TOKEN:-}",
      description = "bearer token for --url (default: $FENCEKEEPER_API_TOKEN)")
  String token;

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    if (url != null) {
      return new RemoteRun(url, token, out, System.err)
          .run(
              job,
              date,
              accounts,
              Optional.ofNullable(deadline),
              Instant.now().plus(deadlineIn),
              maxAttempts,
              maxFailedItems);
    }
    Map<String, Object> overrides = new HashMap<>();
    // the embedded run is a cluster of one: any free remoting port
    overrides.put("pekko.remote.artery.canonical.port", 0);
    overrides.put("pekko.loglevel", "WARNING");
    if (dataDir != null) {
      overrides.put("fencekeeper.data-dir", dataDir.toString());
    }
    try {
      overrides.putAll(
          provider.overrides(
              "sim",
              "--provider must be sim, http with --provider-url, or java with --provider-class"
                  + " and --provider-path",
              ProviderSettings.Kind.SIM,
              ProviderSettings.Kind.HTTP,
              ProviderSettings.Kind.JAVA));
    } catch (ProviderOptions.Usage usage) {
      // a usage error like the others: one line naming what was wrong, no trace, no node
      System.err.println(usage.getMessage());
      return 64;
    }
    if (verify) {
      overrides.put("fencekeeper.verify.when-run-ends", true);
    }
    FencekeeperNode.Builder builder =
        FencekeeperNode.builder(NodeConfig.load(Optional.ofNullable(config), overrides));
    if (workers != null) {
      builder.workers(workers);
    }
    FencekeeperNode node;
    try {
      node = builder.start();
    } catch (IllegalArgumentException refused) {
      // a configuration the node refuses (a provider plugin that cannot be loaded): one line
      System.err.println("fencekeeper node not started: " + refused.getMessage());
      return 78;
    }
    try {
      node.awaitUp(Duration.ofSeconds(60));
      RunService runs = node.runs();
      String runId = job + "/" + date;
      Optional<RunView> existing = get(runs, runId);
      RunView run;
      if (existing.isPresent() && deadline == null) {
        run = existing.get();
        out.println("run " + runId + " exists (" + run.state() + "): reporting it, no new work");
      } else {
        Instant runDeadline = deadline != null ? deadline : Instant.now().plus(deadlineIn);
        // the command line is the trusted local user: it hands the file's contents to the node
        // like an upload, so the file may live anywhere, not only in the node's scope directory
        RunRequest request =
            new RunRequest(job, date, new Scope.Upload(), runDeadline, maxAttempts, maxFailedItems);
        RunCoordinator.CreateReply reply;
        try (InputStream upload = Files.newInputStream(accounts)) {
          CompletableFuture<RunCoordinator.CreateReply> creating =
              runs.create(request, upload).toCompletableFuture();
          reply = whileStaging(out, creating, () -> get(runs, runId));
        } catch (NoSuchFileException e) {
          System.err.println("run not created: " + accounts + " does not exist");
          return 65;
        } catch (java.util.concurrent.ExecutionException e) {
          Throwable cause =
              e.getCause() instanceof CompletionException ce ? ce.getCause() : e.getCause();
          if (cause instanceof ScopeException || cause instanceof RunService.InvalidRunRequest) {
            System.err.println("run not created: " + cause.getMessage());
            return 65;
          }
          throw e;
        }
        if (reply instanceof RunCoordinator.Conflict conflict) {
          System.err.println("run not created: " + conflict.message());
          return 66;
        }
        run =
            reply instanceof RunCoordinator.Created created
                ? created.run()
                : ((RunCoordinator.AlreadyExists) reply).run();
        out.println(
            (reply instanceof RunCoordinator.Created ? "created run " : "run exists: ")
                + runId
                + " with "
                + run.counts().total()
                + " items, deadline "
                + run.deadline());
      }
      ProgressPrinter progress = new ProgressPrinter(out, System.console() != null);
      long started = System.nanoTime();
      boolean endedHere = run.state() == RunState.RUNNING;
      while (run.state() == RunState.RUNNING) {
        progress.show(run);
        Thread.sleep(progress.interactive() ? 250 : 500);
        run = get(runs, runId).orElseThrow();
      }
      progress.finish();
      double seconds = (System.nanoTime() - started) / 1e9;
      // the report is the last word: the node's shutdown below logs only what goes wrong
      QuietShutdown.begin();
      report(out, run, seconds, node.simProvider().orElse(null));
      int exit = run.state().exitCode();
      if (endedHere && VerifySettings.fromConfig(node.system().settings().config()).whenRunEnds()) {
        int verdict = RunVerdict.print(out, node.verifications(), runId);
        exit = verdict != VerifyCommand.AGREE ? verdict : exit;
      }
      return exit;
    } finally {
      node.close();
    }
  }

  private static Optional<RunView> get(RunService runs, String runId) throws Exception {
    return runs.get(runId).toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /**
   * Waits for a create, showing the staging's progress line (rows staged, rows/s) meanwhile: a
   * large scope takes seconds to stage before the run exists.
   */
  static <T> T whileStaging(
      PrintStream out, CompletableFuture<T> creating, Callable<Optional<RunView>> look)
      throws Exception {
    ProgressPrinter staging = new ProgressPrinter(out, System.console() != null);
    boolean shown = false;
    while (true) {
      try {
        T done = creating.get(500, TimeUnit.MILLISECONDS);
        if (shown) {
          staging.finish();
        }
        return done;
      } catch (java.util.concurrent.TimeoutException stillStaging) {
        Optional<RunView> now = look.call();
        if (now.isPresent() && now.get().state() == RunState.STAGING) {
          staging.show(now.get());
          shown = true;
        }
      }
    }
  }

  static void report(PrintStream out, RunView run, double seconds, SimProviderServer sim) {
    out.println();
    out.println("run " + run.runId() + ": " + run.state());
    if (run.endReason() != null) {
      out.println("  reason            " + run.endReason());
    }
    var c = run.counts();
    out.printf(
        "  items             %d total, %d done, %d failed, %d closed, %d quarantined, %d pending%n",
        c.total(), c.done(), c.failed(), c.closed(), c.quarantined(), c.pending() + c.leased());
    if (run.endedAt() != null) {
      double runSeconds = Duration.between(run.createdAt(), run.endedAt()).toMillis() / 1000.0;
      out.printf(
          "  duration          %.1f s (created %s, ended %s)%n",
          runSeconds, run.createdAt(), run.endedAt());
      if (runSeconds > 0) {
        out.printf("  throughput        %.0f items/s%n", c.done() / runSeconds);
      }
    } else {
      out.printf("  watched for       %.1f s%n", seconds);
    }
    out.printf(
        "  stale rejections  %d%n  takeovers         %d%n  reconciliations   %d%n"
            + "  throttled         %d%n  attempts          %d%n",
        run.staleRejections(),
        run.takeovers(),
        run.reconciliations(),
        run.throttledAnswers(),
        run.attempts());
    if (sim != null && !sim.effects().isEmpty()) {
      int max = sim.effects().values().stream().mapToInt(Integer::intValue).max().orElse(0);
      out.printf(
          "  provider effects  %d keys, at most %d per key (this process)%n",
          sim.effects().size(), max);
    }
  }
}

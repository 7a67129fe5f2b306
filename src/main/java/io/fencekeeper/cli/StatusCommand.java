package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.client.ApiClient;
import java.io.PrintStream;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code status [runId]}: the runs of a node, or one run, from its HTTP API; {@code --follow}
 * prints a run's updates as they come.
 */
@Command(name = "status", description = "Show the runs of a node (or one run) via its HTTP API.")
public final class StatusCommand implements Callable<Integer> {

  @Parameters(arity = "0..1", description = "run id, e.g. payment-reconciliation/2026-11-29")
  String runId;

  @Mixin NodeApiOptions api;

  @Option(
      names = {"-f", "--follow"},
      description =
          "with a run id: print a line when the run changes (live, from the run's event stream) until the"
              + " run ends; exit 0 SUCCEEDED, 2 PARTIAL, 3 FAILED or CANCELLED")
  boolean follow;

  private PrintStream out;
  private PrintStream err;

  @Override
  public Integer call() throws Exception {
    out = System.out;
    err = System.err;
    if (follow) {
      if (runId == null) {
        err.println("--follow needs a run id");
        return 64;
      }
      return new RunFollower(api, out, err).follow(runId);
    }
    String path = runId == null ? "/api/runs" : "/api/runs/" + ApiClient.segment(runId);
    Optional<JsonNode> fetched = api.get(path, err);
    if (fetched.isEmpty()) {
      return 1;
    }
    JsonNode body = fetched.get();
    if (api.printedAsJson(body, out)) {
      return 0;
    }
    if (runId != null) {
      printRun(out, body);
    } else if (body.path("runs").isEmpty()) {
      out.println("no runs");
    } else {
      body.path("runs").forEach(run -> printRun(out, run));
    }
    return 0;
  }

  /** A run as the API shows it, on one line (an archived run's too: {@code archive show}). */
  static void printRun(PrintStream out, JsonNode run) {
    JsonNode counts = run.path("counts");
    out.printf(
        "%-40s %-9s done %d/%d  pending %d  leased %d  failed %d  closed %d  backlog %.0fs"
            + "  deadline %s  stale %d  takeovers %d%n",
        run.path("runId").asText(),
        run.path("state").asText(),
        counts.path("done").asLong(),
        counts.path("total").asLong(),
        counts.path("pending").asLong(),
        counts.path("leased").asLong(),
        counts.path("failed").asLong(),
        counts.path("closed").asLong(),
        run.path("backlogAgeSeconds").asDouble(),
        run.path("deadline").asText(),
        run.path("staleRejections").asLong(),
        run.path("takeovers").asLong());
  }
}

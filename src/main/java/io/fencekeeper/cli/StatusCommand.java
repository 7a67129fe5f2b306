package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.ApiClient;
import io.fencekeeper.api.ApiJson;
import java.io.PrintStream;
import java.net.URI;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code status [runId]}: the runs of a node, or one run, from its HTTP API. */
@Command(name = "status", description = "Show the runs of a node (or one run) via its HTTP API.")
public final class StatusCommand implements Callable<Integer> {

  @Parameters(arity = "0..1", description = "run id, e.g. payment-reconciliation/2026-11-29")
  String runId;

  @Option(
      names = "--url",
      defaultValue = "${FENCEKEEPER_URL:-http://127.0.0.1:8080}",
      description = "the node's HTTP API (default: ${DEFAULT-VALUE})")
  URI url;

  @Option(
      names = "--token",
      defaultValue = "${FENCEKEEPER_API_TOKEN:-}",
      description = "bearer token (default: $FENCEKEEPER_API_TOKEN)")
  String token;

  @Option(names = "--json", description = "print the API's JSON as it is")
  boolean json;

  private PrintStream out;
  private PrintStream err;

  @Override
  public Integer call() throws Exception {
    out = System.out;
    err = System.err;
    ApiClient client = new ApiClient(url, token);
    String path = runId == null ? "/api/runs" : "/api/runs/" + ApiClient.segment(runId);
    ApiClient.Answer answer;
    try {
      answer = client.get(path);
    } catch (java.io.IOException e) {
      err.println("cannot reach " + url + ": " + e.getMessage());
      return 1;
    }
    ObjectMapper mapper = ApiJson.mapper();
    if (answer.status() != 200) {
      err.println(answer.status() + " " + answer.body());
      return 1;
    }
    JsonNode body = mapper.readTree(answer.body());
    if (json) {
      out.println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(body));
      return 0;
    }
    if (runId != null) {
      printRun(body);
    } else if (body.path("runs").isEmpty()) {
      out.println("no runs");
    } else {
      body.path("runs").forEach(this::printRun);
    }
    return 0;
  }

  private void printRun(JsonNode run) {
    JsonNode counts = run.path("counts");
    out.printf(
        "%-40s %-9s done %d/%d  pending %d  leased %d  failed %d  closed %d  backlog %.0fs"
            + "  deadline %s  stale %d  expiries %d%n",
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
        run.path("leaseExpiries").asLong());
  }
}

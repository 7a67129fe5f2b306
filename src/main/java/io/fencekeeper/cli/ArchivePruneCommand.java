package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.client.ApiClient;
import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code archive prune --ended-before DATE [--dry-run]}: asks a running node (with the API token)
 * to archive and delete the ended runs that ended before DATE now, as the daily pass does; prints
 * its plan. The pass runs on the cluster's retention keeper, the one place that prunes, so that no
 * run is resumed while it is pruned (docs/design.md, "Retention and the archive").
 */
@Command(
    name = "prune",
    description = "Archive and delete the runs that ended before a date, via a node's API.")
public final class ArchivePruneCommand implements Callable<Integer> {

  @Option(
      names = "--ended-before",
      required = true,
      description =
          "a date (its start, UTC), e.g. 2026-12-01, or an instant, e.g. 2026-12-01T06:00Z")
  String endedBefore;

  @Option(names = "--dry-run", description = "only list what would be archived")
  boolean dryRun;

  @Mixin NodeApiOptions api;

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    PrintStream err = System.err;
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("endedBefore", endedBefore);
    request.put("dryRun", dryRun);
    ApiClient.Answer answer;
    try {
      answer =
          new ApiClient(api.url, api.token)
              .post("/api/archive/prune", api.mapper.writeValueAsString(request));
    } catch (IOException e) {
      err.println("cannot reach " + api.url + ": " + e.getMessage());
      return 1;
    }
    if (answer.status() != 200 && answer.status() != 202) {
      err.println(answer.status() + " " + answer.body());
      return 1;
    }
    JsonNode plan = api.mapper.readTree(answer.body());
    if (api.printedAsJson(plan, out)) {
      return 0;
    }
    for (JsonNode run : plan.path("runs")) {
      out.printf(
          "%-7s %-40s %-9s ended %s: %s%n",
          run.path("action").asText(),
          run.path("runId").asText(),
          run.path("state").asText(),
          run.path("endedAt").asText(),
          run.path("reason").asText());
    }
    long total = plan.path("total").asLong();
    long listed = plan.path("runs").size();
    out.println(
        total
            + " runs"
            + (total > listed ? " (" + listed + " listed)" : "")
            + (plan.path("started").asBoolean()
                ? "; the pass is running: GET /api/runs/{runId} shows each run's archive"
                : "; dry run: nothing changed"));
    return 0;
  }
}

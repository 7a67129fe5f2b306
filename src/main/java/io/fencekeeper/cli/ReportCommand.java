package io.fencekeeper.cli;

import io.fencekeeper.api.client.ApiClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code report <runId>}: every item of a run, one line each (id, status, attempts, effect,
 * provider reference, last error), streamed from a node's HTTP API to stdout or a file.
 */
@Command(
    name = "report",
    description =
        "Download a run's report (CSV or JSON lines, one line per item) via a node's API.")
public final class ReportCommand implements Callable<Integer> {

  @Parameters(index = "0", description = "run id, e.g. payment-reconciliation/2026-11-29")
  String runId;

  @Option(
      names = "--format",
      defaultValue = "csv",
      description = "csv or jsonl (default: ${DEFAULT-VALUE}); --json means jsonl")
  String format;

  @Option(
      names = {"-o", "--output"},
      description = "write to this file instead of stdout")
  Path output;

  @Mixin NodeApiOptions api;

  @Override
  public Integer call() throws Exception {
    PrintStream err = System.err;
    String chosen = api.json ? "jsonl" : format;
    if (!chosen.equals("csv") && !chosen.equals("jsonl")) {
      err.println("--format must be csv or jsonl, got '" + format + "'");
      return 64;
    }
    HttpResponse<InputStream> response;
    try {
      response =
          new ApiClient(api.url, api.token)
              .open(
                  "/api/runs/" + ApiClient.segment(runId) + "/report?format=" + chosen,
                  chosen.equals("csv") ? "text/csv" : "application/x-ndjson");
    } catch (IOException e) {
      err.println("cannot reach " + api.url + ": " + e.getMessage());
      return 1;
    }
    try (InputStream body = response.body()) {
      if (response.statusCode() != 200) {
        err.println(
            response.statusCode() + " " + new String(body.readAllBytes(), StandardCharsets.UTF_8));
        return 1;
      }
      if (output == null) {
        body.transferTo(System.out);
        System.out.flush();
      } else {
        try (OutputStream file = Files.newOutputStream(output)) {
          body.transferTo(file);
        }
      }
    }
    return 0;
  }
}

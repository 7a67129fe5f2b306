package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.runs.RunReport;
import io.fencekeeper.archive.ArchiveManifest;
import java.io.PrintStream;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code archive show RUN}: an archived run as {@code status RUN} shows a live one (its view as the
 * API showed it when it was archived); {@code --report} prints its report as {@code report} does.
 */
@Command(name = "show", description = "Show an archived run (or its report with --report).")
public final class ArchiveShowCommand implements Callable<Integer> {

  @Parameters(index = "0", description = "run id, e.g. payment-reconciliation/2026-11-29")
  String runId;

  @Option(names = "--report", description = "print the run's report, one line per item")
  boolean report;

  @Option(
      names = "--format",
      defaultValue = "csv",
      description = "the report's format: csv or jsonl (default: ${DEFAULT-VALUE})")
  String format;

  @Mixin ArchiveDirOptions archive;

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    PrintStream err = System.err;
    if (!format.equals("csv") && !format.equals("jsonl")) {
      err.println("--format must be csv or jsonl, got '" + format + "'");
      return 64;
    }
    Optional<ArchiveManifest> found = archive.verified(runId, err);
    if (found.isEmpty()) {
      return 1;
    }
    ArchiveManifest manifest = found.get();
    if (report) {
      boolean csv = format.equals("csv") && !archive.json;
      if (csv) {
        out.write(RunReport.csvLine(RunReport.COLUMNS).toArray());
      }
      archive
          .reader()
          .lines(
              manifest,
              line -> {
                if (line.path("kind").asText().equals("item")) {
                  printReportLine(out, line.path("report"), csv);
                }
              });
      out.flush();
      return 0;
    }
    JsonNode[] run = new JsonNode[1];
    archive
        .reader()
        .lines(
            manifest,
            line -> {
              if (run[0] == null && line.path("kind").asText().equals("run")) {
                run[0] = line.path("run");
              }
            });
    if (archive.json) {
      out.println(archive.mapper.writerWithDefaultPrettyPrinter().writeValueAsString(run[0]));
      return 0;
    }
    StatusCommand.printRun(out, run[0]);
    out.printf(
        "archived %s by %s: %s (%d bytes, sha256 %s), %d items, %d events%n",
        manifest.archivedAt(),
        manifest.node(),
        manifest.file(),
        manifest.bytes(),
        manifest.sha256(),
        manifest.items(),
        manifest.events());
    return 0;
  }

  private void printReportLine(PrintStream out, JsonNode fields, boolean csv) {
    try {
      if (csv) {
        @SuppressWarnings("unchecked")
        Map<String, Object> values = archive.mapper.convertValue(fields, Map.class);
        out.write(RunReport.csvLine(values).toArray());
      } else {
        out.write(archive.mapper.writeValueAsBytes((ObjectNode) fields));
        out.write('\n');
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}

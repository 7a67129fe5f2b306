package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.client.ApiClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code verify RUN}: asks a node to verify an ended run against its provider's own record
 * (docs/verification.md), follows it and prints the verdict, the counts and the findings; exit 0
 * when everything agrees, 4 with discrepancies, 5 when the check could not complete.
 */
@Command(
    name = "verify",
    description =
        "Verify an ended run against its provider's record via a node's API. Exit 0 everything"
            + " agrees, 4 discrepancies, 5 the check could not complete (1 the node refused or"
            + " could not be reached, 64 bad usage).")
public final class VerifyCommand implements Callable<Integer> {

  static final int AGREE = 0;
  static final int DISCREPANCIES = 4;
  static final int INCOMPLETE = 5;

  /** Findings printed; the rest are in the export ({@code --output}). */
  static final int PRINTED = 20;

  /** How long the node may be unreachable while the verification goes on in the cluster. */
  static final Duration PATIENCE = Duration.ofSeconds(60);

  @Parameters(index = "0", description = "run id, e.g. payment-reconciliation/2026-11-29")
  String runId;

  @ArgGroup(exclusive = true)
  Rows rows;

  static final class Rows {
    @Option(
        names = "--sample",
        description = "check a random sample of N items (the seed is printed)")
    Long sample;

    @Option(names = "--all", description = "check every item (the default)")
    boolean all;
  }

  @Option(names = "--seed", description = "with --sample: draw the sample from this seed")
  Long seed;

  @Option(
      names = {"-o", "--output"},
      description = "write every finding to this file (CSV, or JSON lines with --format jsonl)")
  Path output;

  @Option(names = "--format", defaultValue = "csv", description = "csv or jsonl for --output")
  String format;

  @Mixin NodeApiOptions api;

  private PrintStream out;
  private PrintStream err;

  @Override
  public Integer call() throws Exception {
    out = System.out;
    err = System.err;
    Long sample = rows != null ? rows.sample : null;
    if ((sample != null && sample < 1) || (seed != null && sample == null)) {
      err.println(sample == null ? "--seed needs --sample" : "--sample must be at least 1");
      return 64;
    }
    if (!format.equals("csv") && !format.equals("jsonl")) {
      err.println("--format must be csv or jsonl");
      return 64;
    }
    ObjectNode body = api.mapper.createObjectNode();
    if (sample != null) {
      body.put("sample", sample);
      if (seed != null) {
        body.put("seed", seed);
      }
    }
    ApiClient client = new ApiClient(api.url, api.token);
    String run = "/api/runs/" + ApiClient.segment(runId);
    ApiClient.Answer started;
    try {
      started = client.post(run + "/verify", api.mapper.writeValueAsString(body));
    } catch (IOException e) {
      err.println("cannot reach " + api.url + ": " + e.getMessage());
      return 1;
    }
    if (started.status() != 202 && started.status() != 200) {
      err.println(started.status() + " " + started.body());
      return 1;
    }
    JsonNode view = api.mapper.readTree(started.body());
    int number = view.path("number").asInt();
    if (!api.json) {
      out.println(
          (started.status() == 200 ? "joined verification " : "verification ")
              + number
              + " of "
              + runId
              + ": "
              + rowsLine(view));
    }
    JsonNode ended = follow(client, run + "/verifications/" + number, view);
    if (ended == null) {
      return 1;
    }
    if (output != null && !export(client, run + "/verifications/" + number)) {
      return 1;
    }
    if (!api.printedAsJson(ended, out)) {
      printResult(ended);
    }
    return switch (ended.path("verdict").asText()) {
      case "AGREE" -> AGREE;
      case "DISCREPANCIES" -> DISCREPANCIES;
      default -> INCOMPLETE;
    };
  }

  private static String rowsLine(JsonNode view) {
    long sample = view.path("sample").asLong();
    return sample == 0
        ? "every item (" + view.path("toCheck").asLong() + ")"
        : "a sample of "
            + sample
            + " of "
            + view.path("population").asLong()
            + " items, seed "
            + view.path("seed").asLong();
  }

  /** Polls the verification once a second until it ends; prints its progress as it grows. */
  private JsonNode follow(ApiClient client, String path, JsonNode first)
      throws IOException, InterruptedException {
    JsonNode view = first;
    long printed = -1;
    long unreachableSince = 0;
    while (view.path("verdict").asText().equals("RUNNING")) {
      LockSupport.parkNanos(Duration.ofSeconds(1).toNanos());
      ApiClient.Answer answer;
      try {
        answer = client.get(path);
      } catch (IOException e) {
        // the verification goes on in the cluster; this node may be on its way back
        long now = System.nanoTime();
        unreachableSince = unreachableSince == 0 ? now : unreachableSince;
        if (now - unreachableSince > PATIENCE.toNanos()) {
          err.println("cannot reach " + api.url + " for " + PATIENCE + ": " + e.getMessage());
          return null;
        }
        continue;
      }
      unreachableSince = 0;
      if (answer.status() != 200) {
        err.println(answer.status() + " " + answer.body());
        return null;
      }
      view = api.mapper.readTree(answer.body());
      long checked = view.path("checked").asLong();
      if (!api.json && checked != printed && view.path("verdict").asText().equals("RUNNING")) {
        out.printf(
            "  %d/%d checked, %d discrepancies so far%n",
            checked, view.path("toCheck").asLong(), view.path("discrepancies").asLong());
        printed = checked;
      }
    }
    return view;
  }

  private void printResult(JsonNode view) {
    JsonNode t = view.path("tally");
    out.printf(
        "%s: %d checked of %s; agree %d, missing %d, different %d, unexpected effect %d,"
            + " resolved %d (applied %d, none %d)%n",
        view.path("verdict").asText(),
        view.path("checked").asLong(),
        rowsLine(view),
        t.path("agree").asLong(),
        t.path("missing").asLong(),
        t.path("different").asLong(),
        t.path("unexpectedEffect").asLong(),
        view.path("resolved").asLong(),
        t.path("resolvedApplied").asLong(),
        t.path("resolvedNone").asLong());
    if (!view.path("reason").isMissingNode() && !view.path("reason").isNull()) {
      out.println("could not complete: " + view.path("reason").asText());
    }
    int shown = 0;
    for (JsonNode f : view.path("findings")) {
      if (shown == PRINTED) {
        break;
      }
      shown++;
      out.printf(
          "  %-17s %s  key %s  journal %s %s %s  provider %s%n",
          f.path("outcome").asText(),
          f.path("itemId").asText(),
          f.path("idempotencyKey").asText(),
          f.path("journalStatus").asText(),
          f.path("journalEffect").asText(),
          f.path("journalEffectId").isNull() ? "-" : f.path("journalEffectId").asText(),
          f.path("providerEffectId").isNull() ? "404" : f.path("providerEffectId").asText());
    }
    long total = view.path("findingCount").asLong();
    if (total > shown) {
      out.println(
          "  ... "
              + total
              + " findings in all: --output FILE, or GET /api/runs/{runId}/verifications/"
              + view.path("number").asInt()
              + "/findings");
    }
  }

  /** Streams every finding into {@code output}. */
  private boolean export(ApiClient client, String path) throws IOException, InterruptedException {
    HttpResponse<InputStream> response =
        client.open(
            path + "/findings?format=" + format,
            format.equals("csv") ? "text/csv" : "application/x-ndjson");
    try (InputStream body = response.body()) {
      if (response.statusCode() != 200) {
        err.println(
            response.statusCode() + " " + new String(body.readAllBytes(), StandardCharsets.UTF_8));
        return false;
      }
      try (OutputStream file = Files.newOutputStream(output)) {
        body.transferTo(file);
      }
    }
    return true;
  }
}

package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.client.ApiClient;
import io.fencekeeper.api.client.EventStreamReader;
import io.fencekeeper.run.RunState;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code status --follow RUN}: reads the run's event stream (the dashboard's) and prints a line per
 * update until the run ends. A stream that breaks (the node restarts, a proxy times out) is
 * reopened with back-off; five failures in a row give up.
 */
final class RunFollower {

  static final int MAX_FAILURES = 5;

  private final NodeApiOptions api;
  private final PrintStream out;
  private final PrintStream err;

  RunFollower(NodeApiOptions api, PrintStream out, PrintStream err) {
    this.api = api;
    this.out = out;
    this.err = err;
  }

  int follow(String runId) throws InterruptedException {
    ApiClient client = new ApiClient(api.url, api.token);
    String path = "/api/runs/" + ApiClient.segment(runId) + "/events";
    int failures = 0;
    while (true) {
      String problem;
      try {
        HttpResponse<InputStream> response = client.open(path, "text/event-stream");
        try (EventStreamReader events = new EventStreamReader(response.body())) {
          if (response.statusCode() != 200) {
            String body =
                new String(response.body().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            err.println(response.statusCode() + " " + body);
            if (response.statusCode() != 503) {
              return 1; // unknown run, bad token: reconnecting would not help
            }
            problem = "the node is busy";
          } else {
            failures = 0;
            Optional<Integer> ended = print(events);
            if (ended.isPresent()) {
              return ended.get();
            }
            problem = "the stream ended";
          }
        }
      } catch (IOException e) {
        problem = "cannot reach " + api.url + ": " + e.getMessage();
      }
      if (++failures >= MAX_FAILURES) {
        err.println(problem + "; giving up after " + failures + " attempts");
        return 1;
      }
      long backoff = Math.min(15_000, 1000L << (failures - 1));
      err.println(problem + "; reconnecting in " + backoff / 1000 + " s");
      LockSupport.parkNanos(Duration.ofMillis(backoff).toNanos());
    }
  }

  /** Prints each update; the run's exit code once it has ended, empty when the stream broke. */
  private Optional<Integer> print(EventStreamReader events) throws IOException {
    // the feed sends a running run every second, changed or not (its chart moves on): a line is
    // printed only when what it shows changed (the time it starts with aside)
    String printed = null;
    for (Optional<EventStreamReader.Event> next = events.next();
        next.isPresent();
        next = events.next()) {
      EventStreamReader.Event event = next.get();
      if (!event.name().equals("snapshot") && !event.name().equals("progress")) {
        continue; // 'closing': the node shuts down, the loop reconnects
      }
      JsonNode run = api.mapper.readTree(event.data()).path("run");
      String text = api.json ? api.mapper.writeValueAsString(run) : line(run);
      String shown = api.json ? text : text.substring(text.indexOf(' ') + 1);
      if (!shown.equals(printed)) {
        printed = shown;
        out.println(text);
      }
      RunState state = RunState.valueOf(run.path("state").asText());
      if (state.ended()) {
        return Optional.of(state.exitCode());
      }
    }
    return Optional.empty();
  }

  static String line(JsonNode run) {
    JsonNode staging = run.path("staging");
    if (staging.isObject()) {
      // a STAGING run: how far its scope has come, and what it waits for if anything
      return String.format(
          Locale.ROOT,
          "%s %s %-9s staged %d rows  %.0f rows/s%s  deadline %s%s",
          LocalTime.now(ZoneId.systemDefault()).truncatedTo(ChronoUnit.SECONDS),
          run.path("runId").asText(),
          run.path("state").asText(),
          staging.path("rowsStaged").asLong(),
          staging.path("rowsPerSecond").asDouble(),
          staging.path("resumes").asInt() > 0
              ? "  resumed " + staging.path("resumes").asInt() + "x"
              : "",
          run.path("deadline").asText(),
          run.path("endReason").isTextual() ? "  (" + run.path("endReason").asText() + ")" : "");
    }
    JsonNode counts = run.path("counts");
    long total = Math.max(1, counts.path("total").asLong());
    long done = counts.path("done").asLong();
    JsonNode governor = run.path("governor");
    String projected = run.path("projectedFinish").asText("");
    return String.format(
        "%s %s %-9s done %d/%d (%.1f%%)  pending %d  leased %d  failed %d  closed %d  %.1f items/s"
            + "  backlog %.0fs  cap %s %s  finish %s  deadline %s  stale %d  takeovers %d",
        LocalTime.now(ZoneId.systemDefault()).truncatedTo(ChronoUnit.SECONDS),
        run.path("runId").asText(),
        run.path("state").asText(),
        done,
        counts.path("total").asLong(),
        100.0 * done / total,
        counts.path("pending").asLong(),
        counts.path("leased").asLong(),
        counts.path("failed").asLong(),
        counts.path("closed").asLong(),
        run.path("itemsPerSecond").asDouble(),
        run.path("backlogAgeSeconds").asDouble(),
        governor.path("cap").isNumber() ? governor.path("cap").asText() : "-",
        governor.path("decision").asText("-"),
        projected.isEmpty() || projected.equals("null") ? "-" : Instant.parse(projected).toString(),
        run.path("deadline").asText(),
        run.path("staleRejections").asLong(),
        run.path("takeovers").asLong());
  }
}

package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.client.ApiClient;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@code run --url}: the same job against a running node. The accounts file is uploaded ({@code
 * POST /api/runs}, {@code text/csv}, streamed from disk), then the run is watched through {@code
 * GET /api/runs/{runId}} until it ends; the exit codes are those of the embedded run.
 */
final class RemoteRun {

  private final ApiClient client;
  private final URI url;
  private final PrintStream out;
  private final PrintStream err;
  private final ObjectMapper mapper =
      ApiJson.mapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  RemoteRun(URI url, String token, PrintStream out, PrintStream err) {
    this.client = new ApiClient(url, token);
    this.url = url;
    this.out = out;
    this.err = err;
  }

  int run(
      String job,
      LocalDate date,
      Path accounts,
      Optional<Instant> deadline,
      Instant defaultDeadline,
      int maxAttempts,
      int maxFailedItems)
      throws Exception {
    String runId = job + "/" + date;
    if (!Files.isRegularFile(accounts)) {
      err.println("run not created: " + accounts + " does not exist");
      return 65;
    }
    ApiClient.Answer existing;
    try {
      existing = client.get(runPath(runId));
    } catch (IOException e) {
      err.println("cannot reach " + url + ": " + e.getMessage());
      return 1;
    }
    RunView run;
    if (existing.status() == 200 && deadline.isEmpty() && !isStaging(existing)) {
      run = view(existing.body());
      out.println("run " + runId + " exists (" + run.state() + "): reporting it, no new work");
    } else {
      String query =
          "?job="
              + ApiClient.param(job)
              + "&businessDate="
              + date
              + "&deadline="
              + ApiClient.param(deadline.orElse(defaultDeadline).toString())
              + "&maxAttempts="
              + maxAttempts
              + "&maxFailedItems="
              + maxFailedItems;
      // the upload is answered once it is staged: meanwhile its progress line shows the rows
      CompletableFuture<ApiClient.Answer> uploading =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return client.upload("/api/runs" + query, "text/csv", accounts);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  throw new IllegalStateException(e);
                }
              });
      ApiClient.Answer answer;
      try {
        answer = RunCommand.whileStaging(out, uploading, () -> staging(runId));
      } catch (java.util.concurrent.ExecutionException e) {
        throw e.getCause() instanceof UncheckedIOException io ? io.getCause() : e;
      }
      switch (answer.status()) {
        case 201, 200, 202 -> {}
        case 409 -> {
          err.println("run not created: " + message(answer));
          return 66;
        }
        default -> {
          err.println("run not created: " + answer.status() + " " + message(answer));
          return answer.status() == 401 || answer.status() >= 500 ? 1 : 65;
        }
      }
      run = view(answer.body());
      out.println(
          (answer.status() == 201
                  ? "created run "
                  : answer.status() == 202 ? "staging run " : "run exists: ")
              + runId
              + " with "
              + run.counts().total()
              + " items"
              + (answer.status() == 202 ? " so far" : "")
              + ", deadline "
              + run.deadline());
    }
    ProgressPrinter progress = new ProgressPrinter(out, System.console() != null);
    long started = System.nanoTime();
    while (run.state() == RunState.RUNNING || run.state() == RunState.STAGING) {
      progress.show(run);
      Thread.sleep(progress.interactive() ? 250 : 1000);
      ApiClient.Answer now = client.get(runPath(runId));
      if (now.status() != 200) {
        err.println("lost the run: " + now.status() + " " + message(now));
        return 1;
      }
      run = view(now.body());
    }
    progress.finish();
    RunCommand.report(out, run, (System.nanoTime() - started) / 1e9, null);
    return run.state().exitCode();
  }

  private static String runPath(String runId) {
    return "/api/runs/" + ApiClient.segment(runId);
  }

  /** The run while it stages (a look that fails shows nothing: the upload's answer will tell). */
  private Optional<RunView> staging(String runId) {
    try {
      ApiClient.Answer now = client.get(runPath(runId));
      return now.status() == 200 ? Optional.of(view(now.body())) : Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  private boolean isStaging(ApiClient.Answer answer) throws IOException {
    return "STAGING".equals(mapper.readTree(answer.body()).path("state").asText());
  }

  /** The API's run JSON as the record the progress line and the report read. */
  private RunView view(String body) throws IOException {
    ObjectNode node = (ObjectNode) mapper.readTree(body);
    node.remove("governor"); // the API's governor view is not the dispatcher's record
    return mapper.treeToValue(node, RunView.class);
  }

  private String message(ApiClient.Answer answer) {
    try {
      JsonNode body = mapper.readTree(answer.body());
      return body.path("message").asText(answer.body());
    } catch (IOException e) {
      return answer.body();
    }
  }
}

package io.fencekeeper.run;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.run.scope.Scope;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * What a {@code run_staging} row means: whether its stager is alive, whether a staging cut off by a
 * fault can go on, the run it shows before the coordinator knows it, and the identity of the
 * request it stages.
 */
final class StagingRows {

  /** The request as it is kept in its staging row, for the node that goes on with it. */
  private static final ObjectMapper REQUEST_JSON =
      JsonMapper.builder().addModule(new JavaTimeModule()).build();

  private StagingRows() {}

  static boolean isLive(StagingTable.Row row) {
    return StagingTable.STAGING.equals(row.state())
        && row.heartbeatAge().compareTo(RunStaging.ABANDONED_AFTER) < 0;
  }

  static String requestJson(RunRequest request) {
    try {
      return REQUEST_JSON.writeValueAsString(request);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a run request is plain JSON", e);
    }
  }

  /** The row's request; empty for a row written before requests were kept (an older node). */
  static Optional<RunRequest> request(StagingTable.Row row) {
    if (row.request() == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(REQUEST_JSON.readValue(row.request(), RunRequest.class));
    } catch (JsonProcessingException e) {
      return Optional.empty();
    }
  }

  /**
   * Why a staging cut off by a fault cannot go on at {@code now}, if it cannot: an upload whose
   * body went with the request, a row that does not say what it stages, a deadline passed. A scope
   * staged in full always can: its upload was answered, and the run is created from its rows (past
   * its deadline too: the run then ends at once, saying so).
   */
  static Optional<String> whyItCannotGoOn(
      StagingTable.Row row, Optional<RunRequest> request, Instant now) {
    if (row.scopeCount() != null && request.isPresent()) {
      return Optional.empty();
    }
    if ("upload".equals(row.scopeKind())) {
      return Optional.of(
          "the upload was cut off after "
              + row.rowsStaged()
              + " rows when "
              + row.node()
              + " stopped, before it was answered: nothing of it was kept; send the upload"
              + " again");
    }
    if (request.isEmpty()) {
      return Optional.of(
          "its stager "
              + row.node()
              + " stopped, and an older version did not keep what it staged; create the run"
              + " again");
    }
    if (now.isAfter(Instant.parse(row.deadline()))) {
      return Optional.of(
          "the run's deadline passed while its staging was interrupted; create the run again"
              + " with a new deadline");
    }
    return Optional.empty();
  }

  /** A run the coordinator does not know yet, from its staging row. */
  static RunView view(StagingTable.Row row) {
    boolean failed = StagingTable.FAILED.equals(row.state());
    boolean live = isLive(row);
    String reason =
        failed ? "scope staging failed: " + row.failure() : live ? row.failure() : interrupted(row);
    return beforeTheRun(
        row.runId(),
        row.job(),
        row.businessDate(),
        failed ? RunState.FAILED : RunState.STAGING,
        row.startedAt(),
        Instant.parse(row.deadline()),
        failed ? row.updatedAt() : null,
        reason,
        row.maxAttempts(),
        row.maxFailedItems(),
        failed
            ? null
            : new StagingProgress(row.rowsStaged(), live ? row.rowsPerSecond() : 0, row.resumes()),
        row.rowsStaged());
  }

  /** A staging row whose stager has not been heard of for a while: what happens next. */
  private static String interrupted(StagingTable.Row row) {
    String heard =
        "scope staging interrupted: no heartbeat from " + row.node() + " since " + row.updatedAt();
    Optional<String> cannot = whyItCannotGoOn(row, request(row), row.readAt());
    if (cannot.isPresent()) {
      return heard + "; " + cannot.get();
    }
    return heard
        + "; it goes on from row "
        + row.resumeRows()
        + " by itself, on its node or on a node that can read its scope"
        + (row.failure() == null ? "" : " (last: " + row.failure() + ")");
  }

  static RunView stagingView(RunRequest request, Instant started, long staged) {
    return beforeTheRun(
        request.runId(),
        request.job(),
        request.businessDate().toString(),
        RunState.STAGING,
        started,
        request.deadline(),
        null,
        null,
        request.maxAttempts(),
        request.maxFailedItems(),
        new StagingProgress(staged, 0, 0),
        staged);
  }

  /** A run before the coordinator has it: no items dispatched, no counters, only its scope. */
  private static RunView beforeTheRun(
      String runId,
      String job,
      String businessDate,
      RunState state,
      Instant startedAt,
      Instant deadline,
      Instant endedAt,
      String reason,
      int maxAttempts,
      int maxFailedItems,
      StagingProgress progress,
      long staged) {
    return new RunView(
        runId,
        job,
        businessDate,
        state,
        startedAt,
        deadline,
        endedAt,
        reason,
        maxAttempts,
        maxFailedItems,
        0,
        new Counts(staged, 0, 0, 0, 0, 0),
        0,
        0,
        null,
        0,
        0,
        0,
        0,
        0,
        0,
        Map.of(),
        null,
        null,
        null,
        null,
        null,
        progress);
  }

  /** The failure itself, out of the futures it came through. */
  static Throwable unwrap(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /**
   * The request's identity before its scope is read: every parameter and the scope's description
   * (inline accounts, file path, query; for an upload only that it is one). Two creates with the
   * same digest are the same create.
   */
  static String requestDigest(RunRequest request) {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
    Function<String, byte[]> utf8 = s -> (s + "\n").getBytes(StandardCharsets.UTF_8);
    digest.update(utf8.apply(request.job()));
    digest.update(utf8.apply(request.businessDate().toString()));
    digest.update(utf8.apply(request.deadline().toString()));
    digest.update(utf8.apply(Integer.toString(request.maxAttempts())));
    digest.update(utf8.apply(Integer.toString(request.maxFailedItems())));
    if (!request.providerName().equals(ProviderName.DEFAULT)) {
      // runs of the default provider keep the digest they had before providers had names
      digest.update(utf8.apply("provider " + request.providerName()));
    }
    Scope scope = request.scope();
    digest.update(utf8.apply(kind(request)));
    if (scope instanceof Scope.Csv csv) {
      digest.update(utf8.apply(csv.path()));
    } else if (scope instanceof Scope.Sql sql) {
      digest.update(utf8.apply(sql.query()));
    } else if (scope instanceof Scope.Inline inline) {
      inline.accounts().forEach(a -> digest.update(utf8.apply(a.toString())));
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  static String kind(RunRequest request) {
    Scope scope = request.scope();
    if (scope instanceof Scope.Csv) {
      return "csv";
    } else if (scope instanceof Scope.Sql) {
      return "sql";
    } else if (scope instanceof Scope.Inline) {
      return "inline";
    }
    return "upload";
  }

  static List<String> differences(StagingTable.Row row, RunRequest request) {
    List<String> differences = new ArrayList<>();
    if (!row.scopeKind().equals(kind(request))) {
      differences.add("scope (" + row.scopeKind() + " vs " + kind(request) + ")");
    }
    if (!row.deadline().equals(request.deadline().toString())) {
      differences.add("deadline (" + row.deadline() + " vs " + request.deadline() + ")");
    }
    if (row.maxAttempts() != request.maxAttempts()) {
      differences.add("maxAttempts (" + row.maxAttempts() + " vs " + request.maxAttempts() + ")");
    }
    if (row.maxFailedItems() != request.maxFailedItems()) {
      differences.add(
          "maxFailedItems (" + row.maxFailedItems() + " vs " + request.maxFailedItems() + ")");
    }
    if (differences.isEmpty()) {
      differences.add("scope");
    }
    return differences;
  }
}

package io.fencekeeper.run;

import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.run.scope.Scope;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a {@code run_staging} row means: whether its stager is alive, the run it shows before the
 * coordinator knows it, and the identity of the request it stages.
 */
final class StagingRows {

  private StagingRows() {}

  static boolean isLive(StagingTable.Row row) {
    return StagingTable.STAGING.equals(row.state())
        && row.heartbeatAge().compareTo(RunStaging.ABANDONED_AFTER) < 0;
  }

  /** A run the coordinator does not know yet, from its staging row. */
  static RunView view(StagingTable.Row row) {
    boolean failed = StagingTable.FAILED.equals(row.state());
    String reason =
        failed
            ? "scope staging failed: " + row.failure()
            : isLive(row)
                ? null
                : "scope staging abandoned: no heartbeat from "
                    + row.node()
                    + " since "
                    + row.updatedAt()
                    + "; create the run again";
    return new RunView(
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
        0,
        new Counts(row.rowsStaged(), 0, 0, 0, 0, 0),
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
        null);
  }

  static RunView stagingView(RunRequest request, Instant started, long staged) {
    return new RunView(
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
        null);
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

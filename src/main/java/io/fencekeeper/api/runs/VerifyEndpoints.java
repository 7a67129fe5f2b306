package io.fencekeeper.api.runs;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiIds;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.ApiStream;
import io.fencekeeper.api.http.JsonBody;
import io.fencekeeper.verify.Finding;
import io.fencekeeper.verify.VerificationKeeper;
import io.fencekeeper.verify.VerificationView;
import io.fencekeeper.verify.Verifications;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * Verifying an ended run (docs/design.md, "Verifying a run"; the report's format in
 * docs/verification.md): start one ({@code POST /api/runs/{runId}/verify}, admin token), the run's
 * verifications, one with its first findings, and every finding as CSV or JSON lines, streamed from
 * the verification's journal.
 */
public final class VerifyEndpoints {

  /** A seed the dashboard's JavaScript can hold exactly: below 2^53. */
  static final long MAX_SEED = (1L << 53) - 1;

  static final List<String> COLUMNS =
      List.of(
          "itemId",
          "idempotencyKey",
          "outcome",
          "journalStatus",
          "journalEffect",
          "journalOutcome",
          "journalEffectId",
          "providerAnswer",
          "providerEffectId",
          "providerAppliedAt",
          "seq");

  private final ObjectMapper mapper;
  private final Verifications verifications;
  private final RunEndpoints runs;

  public VerifyEndpoints(ObjectMapper mapper, Verifications verifications, RunEndpoints runs) {
    this.mapper = mapper;
    this.verifications = verifications;
    this.runs = runs;
  }

  /**
   * 202 with the verification just started, 200 with the one already verifying the same rows; 404
   * unknown_run, 409 run_not_ended or verification_running.
   */
  public CompletionStage<ApiResponse> start(ApiCall call) {
    String runId = ApiIds.runId(call.param(0));
    long sample = 0;
    OptionalLong seed = OptionalLong.empty();
    if (call.body().length > 0) {
      JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("sample", "seed"));
      sample = body.optionalLong("sample", 1, Integer.MAX_VALUE).orElse(0L);
      var given = body.optionalLong("seed", 0, MAX_SEED);
      if (given.isPresent() && sample == 0) {
        throw ApiError.badRequest("seed", "seed needs sample: the whole run has nothing to draw");
      }
      seed = given.map(OptionalLong::of).orElse(OptionalLong.empty());
    }
    return verifications
        .start(runId, sample, seed)
        .thenApply(
            reply -> {
              if (reply instanceof VerificationKeeper.Accepted accepted) {
                return ApiResponse.json(202, view(accepted.view()));
              }
              if (reply instanceof VerificationKeeper.AlreadyRunning running) {
                return ApiResponse.ok(view(running.view()));
              }
              VerificationKeeper.Refused refused = (VerificationKeeper.Refused) reply;
              throw new ApiError(
                  refused.error().equals("unknown_run") ? 404 : 409,
                  refused.error(),
                  refused.message());
            });
  }

  /** {@code {"runId", "verifications": [...]}}, newest first, without findings. */
  public CompletionStage<ApiResponse> list(ApiCall call) {
    return runs.requireRun(call)
        .thenCompose(run -> verifications.list(run.runId()))
        .thenApply(
            all -> {
              Map<String, Object> body = new LinkedHashMap<>();
              body.put("runId", ApiIds.runId(call.param(0)));
              body.put("verifications", all.stream().map(this::view).toList());
              return ApiResponse.ok(body);
            });
  }

  public CompletionStage<ApiResponse> get(ApiCall call) {
    return find(call).thenApply(found -> ApiResponse.ok(view(found)));
  }

  /** Every finding, one line each, in scope order: {@code ?format=csv|jsonl}. */
  public CompletionStage<ApiResponse> findings(ApiCall call) {
    String format = call.query().getOrDefault("format", "csv").toLowerCase(Locale.ROOT);
    for (String name : call.query().keySet()) {
      if (!name.equals("format")) {
        throw ApiError.badRequest(
            ApiError.nameOf(name),
            "unknown query parameter " + ApiError.quotedName(name) + "; allowed: format");
      }
    }
    if (!format.equals("csv") && !format.equals("jsonl")) {
      throw ApiError.badRequest("format", "format must be csv or jsonl");
    }
    boolean csv = format.equals("csv");
    return find(call)
        .thenApply(
            found -> {
              Source<ByteString, ?> lines =
                  verifications.findings(found).map(finding -> line(finding, csv));
              if (csv) {
                lines = Source.single(RunReport.csvLine(COLUMNS)).concat(lines);
              }
              String file =
                  found.runId().replace('/', '-')
                      + "-verification-"
                      + found.number()
                      + "."
                      + format;
              return ApiResponse.stream(ApiStream.download(csv, file, lines));
            });
  }

  /** The verification the path names: a number of this run's, or {@code latest}. */
  private CompletionStage<VerificationView> find(ApiCall call) {
    String runId = ApiIds.runId(call.param(0));
    String which = call.param(1);
    int number;
    if (which.equals("latest")) {
      number = 0;
    } else {
      try {
        number = Integer.parseInt(which);
      } catch (NumberFormatException e) {
        number = -1;
      }
      if (number < 1) {
        throw ApiError.badRequest(
            "number", "number must be a verification's number (1, 2, ...) or latest");
      }
    }
    int wanted = number;
    return runs.requireRun(call)
        .thenCompose(run -> verifications.get(run.runId(), wanted))
        .thenApply(
            found ->
                found.orElseThrow(
                    () ->
                        ApiError.notFound(
                            "unknown_verification",
                            wanted == 0
                                ? "run " + runId + " has not been verified"
                                : "run " + runId + " has no verification " + wanted)));
  }

  /** The view as the API shows it: the record, and its verdict and counts at the top. */
  ObjectNode view(VerificationView view) {
    ObjectNode node = mapper.createObjectNode();
    node.put("verdict", view.verdict());
    node.put("checked", view.checked());
    node.put("discrepancies", view.tally().discrepancies());
    node.put("resolved", view.tally().resolved());
    node.setAll((ObjectNode) mapper.valueToTree(view));
    node.set("findings", mapper.valueToTree(view.findings().stream().map(this::fields).toList()));
    return node;
  }

  private Map<String, Object> fields(Finding finding) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("itemId", finding.itemId());
    fields.put("idempotencyKey", finding.idempotencyKey());
    fields.put("outcome", finding.outcome().name());
    fields.put("journalStatus", finding.journalStatus());
    fields.put("journalEffect", finding.journalEffect());
    fields.put("journalOutcome", finding.journalOutcome());
    fields.put("journalEffectId", finding.journalEffectId());
    fields.put("providerAnswer", finding.providerFound() ? "FOUND" : "NOT_FOUND");
    fields.put("providerEffectId", finding.providerEffectId());
    fields.put(
        "providerAppliedAt",
        finding.providerAppliedAt() == null ? null : finding.providerAppliedAt().toString());
    fields.put("seq", finding.seq());
    return fields;
  }

  private ByteString line(Finding finding, boolean csv) {
    Map<String, Object> fields = fields(finding);
    if (!csv) {
      try {
        return ByteString.fromArray(mapper.writeValueAsBytes(fields))
            .concat(ByteString.fromString("\n"));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("could not write a finding", e);
      }
    }
    // effect ids come from the provider: they must not become a formula in a spreadsheet
    for (String text : List.of("journalEffectId", "providerEffectId")) {
      fields.computeIfPresent(text, (name, value) -> RunReport.spreadsheetSafe(value.toString()));
    }
    return RunReport.csvLine(COLUMNS.stream().map(fields::get).toList());
  }
}

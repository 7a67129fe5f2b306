package io.fencekeeper.api.runs;

import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.extractDataBytes;
import static org.apache.pekko.http.javadsl.server.Directives.extractMaterializer;
import static org.apache.pekko.http.javadsl.server.Directives.withSizeLimit;
import static org.apache.pekko.http.javadsl.server.Directives.withoutRequestTimeout;

import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.scope.Scope;
import java.io.InputStream;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.javadsl.StreamConverters;

/**
 * {@code POST /api/runs} with a {@code Content-Type: text/csv} body: the scope streamed into {@code
 * run_item} as it arrives, never held in memory, with the run's parameters as query parameters.
 * Unlike every other route the body is not read whole (the others are capped at 64 KiB); it has its
 * own limit ({@code fencekeeper.http.max-upload-bytes}), and no request timeout: the answer comes
 * once the body has been read, however long the client takes to send it.
 */
public final class RunUploads {

  static final String PATH = "/api/runs";

  private static final Set<String> PARAMETERS =
      Set.of("job", "businessDate", "deadline", "maxAttempts", "maxFailedItems", "provider");

  private RunUploads() {}

  /** Whether the request is an upload; everything else takes the strict route. */
  public static boolean isUpload(HttpRequest request) {
    return request.method().name().equals("POST")
        && request.getUri().path().equals(PATH)
        && request.entity().getContentType().mediaType().toString().equals("text/csv");
  }

  /**
   * The streaming route: {@code respond} gets the body as a supplier, so that nothing is read
   * before the token is checked, and answers the response.
   */
  public static Route route(
      RunIntakeSettings settings,
      Function<Supplier<InputStream>, CompletionStage<HttpResponse>> respond) {
    return withoutRequestTimeout(
        () ->
            withSizeLimit(
                settings.maxUploadBytes(),
                () ->
                    extractMaterializer(
                        materializer ->
                            extractDataBytes(
                                bytes ->
                                    completeWithFuture(
                                        respond.apply(
                                            () ->
                                                bytes.runWith(
                                                    StreamConverters.asInputStream(
                                                        settings.uploadStallTimeout()),
                                                    materializer)))))));
  }

  /** The run parameters of an upload, from its query; every refusal names the parameter. */
  static RunRequest request(Map<String, String> query) {
    for (String name : query.keySet()) {
      if (!PARAMETERS.contains(name)) {
        throw ApiError.badRequest(
            ApiError.nameOf(name),
            "unknown query parameter "
                + ApiError.quotedName(name)
                + "; allowed: "
                + String.join(", ", PARAMETERS.stream().sorted().toList()));
      }
    }
    String job = required(query, "job");
    if (job.length() > 128) {
      throw ApiError.badRequest("job", "job must be at most 128 characters");
    }
    LocalDate businessDate;
    try {
      businessDate = LocalDate.parse(required(query, "businessDate"));
    } catch (DateTimeParseException e) {
      throw ApiError.badRequest(
          "businessDate", "businessDate must be a date such as 2026-11-29 (yyyy-MM-dd)");
    }
    Instant deadline;
    try {
      deadline = Instant.parse(required(query, "deadline"));
    } catch (DateTimeParseException e) {
      throw ApiError.badRequest(
          "deadline", "deadline must be an ISO-8601 instant such as 2026-11-30T06:00:00Z");
    }
    int maxAttempts = optionalInt(query, "maxAttempts", 1, 100, 5);
    int maxFailedItems = optionalInt(query, "maxFailedItems", 0, Integer.MAX_VALUE, 0);
    String provider = query.get("provider");
    return new RunRequest(
        job,
        businessDate,
        new Scope.Upload(),
        deadline,
        maxAttempts,
        maxFailedItems,
        provider == null || provider.isEmpty() ? null : provider);
  }

  private static String required(Map<String, String> query, String name) {
    String value = query.get(name);
    if (value == null || value.isBlank()) {
      throw ApiError.badRequest(name, "query parameter " + name + " is required");
    }
    return value;
  }

  private static int optionalInt(
      Map<String, String> query, String name, int min, int max, int fallback) {
    String value = query.get(name);
    if (value == null || value.isEmpty()) {
      return fallback;
    }
    try {
      long n = Long.parseLong(value);
      if (n < min || n > max) {
        throw ApiError.badRequest(name, name + " must be between " + min + " and " + max);
      }
      return (int) n;
    } catch (NumberFormatException e) {
      throw ApiError.badRequest(name, name + " must be a whole number");
    }
  }
}

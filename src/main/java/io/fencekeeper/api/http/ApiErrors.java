package io.fencekeeper.api.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.ExceptionHandler;
import org.apache.pekko.http.javadsl.server.Rejection;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.http.scaladsl.model.IllegalRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every refusal and failure as the one error envelope {@code {"error", "message", ...}}, and every
 * {@link ApiResponse} as HTTP. Nothing a client sends reaches Pekko's default error pages, no
 * refusal of input is a 500, and no answer carries a stack trace.
 */
public final class ApiErrors {

  private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

  private final ObjectMapper mapper;
  private final long maxBodyBytes;

  public ApiErrors(ObjectMapper mapper, long maxBodyBytes) {
    this.mapper = mapper;
    this.maxBodyBytes = maxBodyBytes;
  }

  /** What a failed handler answers. */
  public ApiResponse failureResponse(Throwable failure) {
    Throwable cause = ApiErrors.unwrap(failure);
    if (cause instanceof ApiError error) {
      return ApiResponse.json(error.status(), error.body());
    }
    if (cause instanceof TimeoutException) {
      log.warn("HTTP API request timed out: {}", cause.getMessage());
      return unavailable(
          "the cluster did not answer in time; whether the command was applied is unknown:"
              + " read the item before retrying");
    }
    // a failure of the node itself is "unavailable", and logged
    log.error("HTTP API request failed", cause);
    return unavailable("the node could not answer; its log has the cause");
  }

  /**
   * What a request answers when it outlives the server's request timeout: still running inside the
   * node (a command may yet be applied), or still sending its body.
   */
  public HttpResponse requestTimedOut(HttpRequest request) {
    return toHttp(
        ApiResponse.json(
            503,
            new ApiError(
                    503,
                    "request_timeout",
                    "the node did not answer within its request timeout; whether a command was"
                        + " applied is unknown: read it before retrying")
                .body()));
  }

  public static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  private static ApiResponse unavailable(String message) {
    return ApiResponse.json(503, new ApiError(503, "unavailable", message).body());
  }

  public HttpResponse toHttp(ApiResponse response) {
    return withApiHeaders(entity(response));
  }

  /**
   * Every API answer (JSON, text, streams, errors) is never stored by a browser or proxy, and never
   * content-sniffed: it holds payment data, and a browser must not read an error that quotes a name
   * as HTML. A stream that sets its own {@code Cache-Control} keeps it.
   */
  static HttpResponse withApiHeaders(HttpResponse response) {
    HttpResponse out = response;
    if (out.getHeader("Cache-Control").isEmpty()) {
      out = out.addHeader(RawHeader.create("Cache-Control", "no-store"));
    }
    if (out.getHeader("X-Content-Type-Options").isEmpty()) {
      out = out.addHeader(RawHeader.create("X-Content-Type-Options", "nosniff"));
    }
    return out;
  }

  private HttpResponse entity(ApiResponse response) {
    HttpResponse http = HttpResponse.create().withStatus(StatusCodes.get(response.status()));
    if (response.stream() != null) {
      return response.stream().toHttp(http);
    }
    if (response.text() != null) {
      return http.withEntity(
          HttpEntities.create(
              ContentTypes.parse(response.contentType() + "; charset=utf-8"),
              response.text().getBytes(StandardCharsets.UTF_8)));
    }
    if (response.json() == null) {
      return http;
    }
    if (response.status() == 401) {
      http = http.addHeader(RawHeader.create("WWW-Authenticate", "Bearer realm=\"fencekeeper\""));
    }
    if (response.json() instanceof Map<?, ?> body
        && body.get("retryAfterMillis") instanceof Number wait) {
      // an answer that says when to ask again says it in HTTP's words too: whole seconds, up
      http =
          http.addHeader(
              RawHeader.create(
                  "Retry-After", String.valueOf(Math.max(1, (wait.longValue() + 999) / 1000))));
    }
    try {
      return http.withEntity(
          HttpEntities.create(
              ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(response.json())));
    } catch (JsonProcessingException e) {
      log.error("could not write a response", e);
      return HttpResponse.create()
          .withStatus(StatusCodes.SERVICE_UNAVAILABLE)
          .withEntity(
              HttpEntities.create(
                  ContentTypes.APPLICATION_JSON,
                  "{\"error\":\"unavailable\",\"message\":\"the response could not be written\"}"));
    }
  }

  private Route envelope(int status, String code, String message) {
    return complete(toHttp(ApiResponse.json(status, new ApiError(status, code, message).body())));
  }

  private Route bodyTooLarge() {
    return envelope(413, "body_too_large", "the request body exceeds " + maxBodyBytes + " bytes");
  }

  /** What pekko-http throws while reading a request: too large, or malformed. */
  public ExceptionHandler exceptionHandler() {
    return ExceptionHandler.newBuilder()
        .match(EntityStreamSizeException.class, e -> bodyTooLarge())
        .match(
            IllegalRequestException.class,
            e ->
                e.status().intValue() == 413 || e.info().summary().startsWith("Request too large")
                    ? bodyTooLarge()
                    // the body stopped coming: the caller's connection, not its JSON, is at fault
                    : e.status().intValue() == 408
                        ? envelope(
                            408,
                            "body_timeout",
                            "the request body did not arrive in time; send it whole")
                        : envelope(
                            400,
                            "bad_request",
                            "the request is malformed: " + ParsingErrors.plain(e.info().summary())))
        .matchAny(
            e -> {
              log.error("HTTP API route failed", e);
              return envelope(503, "unavailable", "the node could not answer the request");
            })
        .build();
  }

  public RejectionHandler rejectionHandler() {
    return RejectionHandler.newBuilder()
        .handleAll(
            Rejection.class,
            // a rejection's description names pekko's classes and may quote the request
            rejections -> envelope(400, "bad_request", "the request was refused as malformed"))
        .handleNotFound(envelope(404, "not_found", "no such endpoint"))
        .build();
  }
}

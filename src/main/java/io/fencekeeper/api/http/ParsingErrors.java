package io.fencekeeper.api.http;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;

/**
 * The error envelope for a request pekko-http cannot even parse (an illegal path such as {@code
 * /api/items/%ZZ}, a URI or header over the limits): such a request never reaches the API's routes,
 * so without this its answer would be pekko's plain-text page. Configured as {@code
 * pekko.http.server.parsing.error-handler}. The code says what was wrong (414 {@code uri_too_long},
 * 431 {@code headers_too_large}); the message never quotes the request, since pekko's own
 * descriptions of it do.
 */
public final class ParsingErrors extends ParsingErrorHandler {

  /** The error code of each status a request that cannot be parsed may get; others: 400's. */
  static final Map<Integer, String> CODES =
      Map.of(
          400, "bad_request",
          413, "body_too_large",
          414, "uri_too_long",
          431, "headers_too_large",
          501, "not_implemented",
          505, "http_version_not_supported");

  private static final Map<Integer, String> MESSAGES =
      Map.of(
          413, "the request body is too large",
          414, "the request URI is longer than the node accepts (4 KiB)",
          431, "the request has too many headers (at most 64) or a header that is too long",
          501, "the request uses a method or transfer coding this server does not implement",
          505, "only HTTP/1.0 and HTTP/1.1 are served");

  @Override
  public HttpResponse handle(
      StatusCode status, ErrorInfo error, LoggingAdapter log, ServerSettings settings) {
    log.debug("refused a request that could not be parsed: {}", error.formatPretty());
    int code = statusOf(status.intValue(), error.summary());
    String message =
        MESSAGES.getOrDefault(code, "the request could not be parsed: " + plain(error.summary()));
    String json = "{\"error\":\"" + CODES.get(code) + "\",\"message\":\"" + message + "\"}";
    return ApiErrors.withApiHeaders(
        HttpResponse.create()
            .withStatus(StatusCodes.get(code))
            .withEntity(
                HttpEntities.create(
                    ContentTypes.APPLICATION_JSON, json.getBytes(StandardCharsets.UTF_8))));
  }

  /**
   * Pekko answers a header over its count or length limit with 400; the caller learns more from
   * 431, the status for exactly that (RFC 6585).
   */
  static int statusOf(int status, String summary) {
    String text = summary == null ? "" : summary.toLowerCase(java.util.Locale.ROOT);
    if (status == 400 && text.contains("header") && text.contains("configured limit")) {
      return 431;
    }
    return CODES.containsKey(status) ? status : 400;
  }

  /**
   * The kind of problem pekko names ("Illegal request-target"), without anything it quotes from the
   * request: what follows a colon or sits in quotes is dropped, and only plain characters are kept.
   */
  static String plain(String summary) {
    String text = summary == null ? "" : summary.replaceAll("'[^']*'|\"[^\"]*\"", "");
    int colon = text.indexOf(':');
    if (colon >= 0) {
      text = text.substring(0, colon);
    }
    text = text.replaceAll("[^A-Za-z0-9 .,()-]", "").replaceAll("\\s+", " ").strip();
    if (text.length() > 120) {
      text = text.substring(0, 120);
    }
    return text.isEmpty() ? "malformed request" : text;
  }
}

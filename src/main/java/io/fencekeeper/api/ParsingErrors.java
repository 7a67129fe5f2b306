package io.fencekeeper.api;

import java.nio.charset.StandardCharsets;
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
 * /api/items/%ZZ}, a header too large): such a request never reaches the API's routes, so without
 * this its answer would be pekko's plain-text page. Configured as {@code
 * pekko.http.server.parsing.error-handler}.
 */
public final class ParsingErrors extends ParsingErrorHandler {

  @Override
  public HttpResponse handle(
      StatusCode status, ErrorInfo error, LoggingAdapter log, ServerSettings settings) {
    log.debug("refused a request that could not be parsed: {}", error.formatPretty());
    String code = status.intValue() == 413 ? "body_too_large" : "bad_request";
    String json =
        "{\"error\":\""
            + code
            + "\",\"message\":\"the request could not be parsed: "
            + escape(ApiIds.abbreviate(error.summary()))
            + "\"}";
    return HttpResponse.create()
        .withStatus(StatusCodes.get(status.intValue()))
        .withEntity(
            HttpEntities.create(
                ContentTypes.APPLICATION_JSON, json.getBytes(StandardCharsets.UTF_8)));
  }

  private static String escape(String text) {
    StringBuilder out = new StringBuilder(text.length());
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(' ');
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}

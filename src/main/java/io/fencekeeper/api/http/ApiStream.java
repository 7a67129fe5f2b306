package io.fencekeeper.api.http;

import java.util.Map;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * A body written while it is produced (server-sent events, a report of a million items): sent
 * chunked, never held in memory as a whole.
 */
public record ApiStream(
    String contentType, Map<String, String> headers, Source<ByteString, ?> body) {

  /**
   * A CSV or JSON lines file to save as {@code file}: a download (the report, a verification's
   * findings), never cached.
   */
  public static ApiStream download(boolean csv, String file, Source<ByteString, ?> lines) {
    return new ApiStream(
        csv ? "text/csv; charset=UTF-8" : "application/x-ndjson",
        Map.of(
            "Content-Disposition",
            "attachment; filename=\"" + file + "\"",
            "Cache-Control",
            "no-store"),
        lines);
  }

  HttpResponse toHttp(HttpResponse http) {
    ContentType type = ContentTypes.parse(contentType);
    HttpResponse response = http.withEntity(HttpEntities.createChunked(type, body));
    for (Map.Entry<String, String> header : headers.entrySet()) {
      response = response.addHeader(RawHeader.create(header.getKey(), header.getValue()));
    }
    return response;
  }
}

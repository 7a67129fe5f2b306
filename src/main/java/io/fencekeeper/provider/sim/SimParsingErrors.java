package io.fencekeeper.provider.sim;

import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.ErrorBody;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;

/**
 * The sim's answer to a request its HTTP layer cannot parse (a {@code %zz} in the path or query, a
 * header too long, a transfer coding other than chunked, a target longer than the limit): a status
 * of the protocol's closed list (docs/provider-protocol.md, "Statuses and codes": {@code 413} and
 * {@code 408} as they are, every other one {@code 400 bad_request}) with the error envelope, the
 * version header of a 1.1 sim, and {@code Connection: close}. Pekko makes one per connection by its
 * class name ({@code pekko.http.server.parsing.error-handler}), so it finds its sim by the {@code
 * Server} header the sim's settings name.
 */
public final class SimParsingErrors extends ParsingErrorHandler {

  private static final AtomicLong NEXT = new AtomicLong();

  /** Each sim's {@code Server} header value and whether it answers as 1.1 now. */
  private static final Map<String, Supplier<Boolean>> SIMS = new ConcurrentHashMap<>();

  /** A {@code Server} header value for a new sim, whose version {@code speaks11} tells. */
  static String register(Supplier<Boolean> speaks11) {
    String server = "fencekeeper-sim-provider/" + NEXT.incrementAndGet();
    SIMS.put(server, speaks11);
    return server;
  }

  static void unregister(String server) {
    SIMS.remove(server);
  }

  @Override
  public HttpResponse handle(
      StatusCode status, ErrorInfo info, LoggingAdapter log, ServerSettings settings) {
    int code = status.intValue();
    String summary = info.summary() == null ? "" : info.summary();
    String message =
        "the request could not be read: "
            + (summary.length() > 200 ? summary.substring(0, 200) : summary);
    HttpResponse answer =
        switch (code) {
          case 413 ->
              SimTransport.respond(413, ErrorBody.of(HttpProtocol.PAYLOAD_TOO_LARGE, message));
          case 408 ->
              SimTransport.respond(408, ErrorBody.of(HttpProtocol.REQUEST_TIMEOUT, message));
          default -> SimTransport.respond(400, ErrorBody.of(HttpProtocol.BAD_REQUEST, message));
        };
    List<HttpHeader> headers = new ArrayList<>(List.of(Connection.create("close")));
    String server = settings.getServerHeader().map(h -> h.value()).orElse("");
    if (SIMS.getOrDefault(server, () -> true).get()) {
      headers.add(RawHeader.create(HttpProtocol.PROTOCOL, HttpProtocol.VERSION_1_1));
    }
    return answer.addHeaders(headers);
  }
}

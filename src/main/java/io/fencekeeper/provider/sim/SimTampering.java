package io.fencekeeper.provider.sim;

import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.ErrorBody;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * The simulated provider's discrepancy faults (docs/provider-protocol.md, section 7): what a
 * verification of a finished run must find. {@code DELETE /admin/effects/{key}} loses the effect
 * under a key (the provider's ledger lost it); {@code POST /admin/effects/{key}} writes one that
 * Fencekeeper never asked for (a second system writing under the same key). {@code GET
 * /admin/lookups} counts the lookups answered per key, so a test can tell how often each item was
 * looked up.
 */
final class SimTampering {

  static final String EFFECTS_PATH = "/admin/effects/";
  static final String LOOKUPS_PATH = "/admin/lookups";

  private SimTampering() {}

  /**
   * One request to {@code /admin/effects/{key}}; {@code segment} is the decoded path segment after
   * the prefix, empty when the rest of the path is not one segment.
   */
  static HttpResponse effect(String method, Optional<String> segment, SimLedger ledger) {
    if (segment.isEmpty() || !HttpProtocol.isKey(segment.get())) {
      return SimTransport.respond(
          400,
          ErrorBody.of(
              HttpProtocol.BAD_REQUEST,
              "the key is one path segment of 1-255 characters of visible ASCII"));
    }
    String key = segment.get();
    return switch (method) {
      case "DELETE" ->
          ledger.lose(key)
              ? HttpResponse.create().withStatus(204)
              : SimTransport.respond(
                  404,
                  ErrorBody.of(HttpProtocol.NOT_FOUND, "no effect is recorded under this key"));
      case "POST" -> SimTransport.respond(201, ledger.writeForeign(key));
      default ->
          SimTransport.respond(
              405,
              ErrorBody.of("method_not_allowed", "use DELETE or POST on this path"),
              RawHeader.create("Allow", "DELETE, POST"));
    };
  }

  /** {@code {"total": N, "lookups": {"<key>": n, ...}}}. */
  static HttpResponse lookups(SimLedger ledger) {
    Map<String, Long> perKey = ledger.lookups();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("total", perKey.values().stream().mapToLong(Long::longValue).sum());
    body.put("lookups", perKey);
    return SimTransport.respond(200, body);
  }
}

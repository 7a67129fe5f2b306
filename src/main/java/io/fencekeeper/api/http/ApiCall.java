package io.fencekeeper.api.http;

import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One request as the endpoint handlers see it: the matched endpoint, its path parameters
 * (percent-decoded, one segment each), the query and the body bytes (already size-limited); for a
 * {@code text/csv} upload ({@code RunUploads}) the body is not read whole but opened as a stream,
 * and {@code upload} is not null. {@code role} is what the caller may do ({@link ApiAuth}); {@code
 * remoteAddress} the address of the connection's peer (what per-caller limits count).
 */
public record ApiCall(
    ApiEndpoint endpoint,
    List<String> params,
    Map<String, String> query,
    byte[] body,
    Supplier<InputStream> upload,
    ApiAuth.Role role,
    String remoteAddress) {

  /** A call whose peer is not known (tests that call a handler directly). */
  public ApiCall(
      ApiEndpoint endpoint,
      List<String> params,
      Map<String, String> query,
      byte[] body,
      Supplier<InputStream> upload,
      ApiAuth.Role role) {
    this(endpoint, params, query, body, upload, role, "unknown");
  }

  public String param(int index) {
    return params.get(index);
  }
}

package io.fencekeeper.api.http;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.Optional;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.RemoteAddress;

/**
 * Who may call what (docs/security.md, "The HTTP API"). With a token configured, every call needs
 * {@code Authorization: Bearer <token>}, reads included: the API token may do everything, the read
 * token only what changes nothing. {@code GET /metrics} alone may go without a token, and only from
 * this machine. Without a token the API listens on loopback only ({@link ApiSettings}) and answers
 * only requests addressed to a loopback name, so a web page that rebinds its own name to 127.0.0.1
 * cannot read it. Every request that changes state must say {@code Content-Type: application/json}
 * (or {@code text/csv} for a scope upload): a browser cannot send that across origins without a
 * CORS preflight, which this API never answers, so a web page cannot make a loopback node act.
 */
public final class ApiAuth {

  /** What a caller may do. */
  public enum Role {
    /** No token is configured: loopback only, everything allowed. */
    OPEN,
    /** The read token: every read, no change. */
    READ,
    /** The API token: everything. */
    ADMIN
  }

  private final boolean tokenRequired;
  private final byte[] adminAuthorization;
  private final byte[] readAuthorization;

  public ApiAuth(ApiSettings settings) {
    this.tokenRequired = settings.tokenRequired();
    this.adminAuthorization = bearer(settings.apiToken());
    this.readAuthorization = bearer(settings.apiReadToken());
  }

  private static byte[] bearer(String token) {
    return token.isEmpty() ? null : ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The caller's role for this request, or a refusal: 401 without a valid token, 403 for the read
   * token on a change or a request addressed to another host. Checked before the body is read, so a
   * refused request changes nothing.
   */
  public Role authorize(HttpRequest request, ApiEndpoint endpoint, boolean upload) {
    Role role;
    if (!tokenRequired) {
      requireLoopbackHost(request);
      role = Role.OPEN;
    } else {
      Optional<String> presented = request.getHeader("Authorization").map(h -> h.value());
      if (presented.isEmpty()) {
        if (endpoint == ApiEndpoint.METRICS && fromLoopback(request)) {
          return Role.READ; // a local Prometheus scrape
        }
        throw new ApiError(
            401, "unauthorized", "this node needs 'Authorization: Bearer <token>' on every call");
      }
      role = roleOf(presented.get());
    }
    if (endpoint.mutating()) {
      if (role == Role.READ) {
        throw new ApiError(
            403, "forbidden", "the read-only token cannot change anything; use the API token");
      }
      requireContentType(request, upload);
    }
    return role;
  }

  /** Constant time: the comparison must not tell an attacker how many characters were right. */
  private Role roleOf(String presented) {
    byte[] bytes = presented.getBytes(StandardCharsets.UTF_8);
    boolean admin = adminAuthorization != null && MessageDigest.isEqual(adminAuthorization, bytes);
    boolean read = readAuthorization != null && MessageDigest.isEqual(readAuthorization, bytes);
    if (admin) {
      return Role.ADMIN;
    }
    if (read) {
      return Role.READ;
    }
    throw new ApiError(401, "unauthorized", "the bearer token is not valid");
  }

  private static void requireContentType(HttpRequest request, boolean upload) {
    String type = request.entity().getContentType().mediaType().toString().toLowerCase(Locale.ROOT);
    String expected = upload ? "text/csv" : "application/json";
    if (!type.equals(expected)) {
      throw new ApiError(
          415,
          "unsupported_media_type",
          "a request that changes state must have 'Content-Type: " + expected + "'");
    }
  }

  /**
   * DNS rebinding: a page on evil.example that resolves its name to 127.0.0.1 reaches a token-less
   * node, but its requests still say {@code Host: evil.example}.
   */
  private static void requireLoopbackHost(HttpRequest request) {
    String host = request.getUri().host().address().toLowerCase(Locale.ROOT);
    if (host.isEmpty()) {
      host =
          request.getHeader("Host").map(h -> h.value()).orElse("").toLowerCase(Locale.ROOT).trim();
      int colon = host.startsWith("[") ? host.indexOf("]:") + 1 : host.lastIndexOf(':');
      if (colon > 0 && !host.endsWith("]")) {
        host = host.substring(0, colon);
      }
    }
    if (!ApiSettings.isLoopback(host)) {
      throw new ApiError(
          403,
          "host_not_allowed",
          "a node without a token answers only requests addressed to localhost or a loopback"
              + " address");
    }
  }

  /** The connection's peer address, as per-caller limits count callers; "unknown" without one. */
  public static String peer(HttpRequest request) {
    return request
        .getAttribute(AttributeKeys.remoteAddress)
        .flatMap(RemoteAddress::getAddress)
        .map(InetAddress::getHostAddress)
        .orElse("unknown");
  }

  private static boolean fromLoopback(HttpRequest request) {
    return request
        .getAttribute(AttributeKeys.remoteAddress)
        .flatMap(RemoteAddress::getAddress)
        .map(InetAddress::isLoopbackAddress)
        .orElse(false);
  }
}

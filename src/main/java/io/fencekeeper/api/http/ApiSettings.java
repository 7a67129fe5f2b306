package io.fencekeeper.api.http;

import io.fencekeeper.node.NodeSettings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * Where the HTTP API listens and what it accepts.
 *
 * @param apiToken bearer token for every call (reads included); empty means none, and then the API
 *     listens on loopback only
 * @param apiReadToken bearer token that reads but never changes anything (dashboards, monitoring)
 * @param maxBodyBytes request bodies larger than this answer 413
 * @param maxLease the longest lease the lease API grants (the item refuses longer ones too)
 */
public record ApiSettings(
    String host,
    int port,
    String apiToken,
    String apiReadToken,
    long maxBodyBytes,
    Duration maxLease) {

  public static final long DEFAULT_MAX_BODY_BYTES = 64 * 1024;

  public ApiSettings {
    apiToken = apiToken == null ? "" : apiToken.trim();
    apiReadToken = apiReadToken == null ? "" : apiReadToken.trim();
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("fencekeeper.http.host must not be empty");
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("fencekeeper.http.port must be 0-65535, got " + port);
    }
    if (maxBodyBytes < 1024) {
      throw new IllegalArgumentException("the HTTP body limit must be at least 1 KiB");
    }
    if (!apiToken.isEmpty() && apiToken.length() < 16) {
      throw new IllegalArgumentException(
          "FENCEKEEPER_API_TOKEN must be at least 16 characters; a short token is guessable");
    }
    if (!apiReadToken.isEmpty() && apiReadToken.length() < 16) {
      throw new IllegalArgumentException(
          "FENCEKEEPER_API_READ_TOKEN must be at least 16 characters; a short token is guessable");
    }
    if (!apiReadToken.isEmpty() && apiReadToken.equals(apiToken)) {
      throw new IllegalArgumentException(
          "FENCEKEEPER_API_READ_TOKEN must differ from FENCEKEEPER_API_TOKEN");
    }
    // docs/design.md, "HTTP API": a node reachable from other machines never serves mutations
    // unauthenticated
    if (apiToken.isEmpty() && apiReadToken.isEmpty() && !isLoopback(host)) {
      throw new IllegalArgumentException(
          "FENCEKEEPER_HTTP_HOST is "
              + host
              + ", which is not a loopback address: set FENCEKEEPER_API_TOKEN before exposing"
              + " the HTTP API beyond this machine");
    }
  }

  public static ApiSettings from(NodeSettings node) {
    return new ApiSettings(
        node.httpHost(),
        node.httpPort(),
        node.apiToken(),
        node.apiReadToken(),
        DEFAULT_MAX_BODY_BYTES,
        node.maxLease());
  }

  public ApiSettings withPort(int newPort) {
    return new ApiSettings(host, newPort, apiToken, apiReadToken, maxBodyBytes, maxLease);
  }

  public ApiSettings withToken(String token) {
    return new ApiSettings(host, port, token, apiReadToken, maxBodyBytes, maxLease);
  }

  public ApiSettings withReadToken(String token) {
    return new ApiSettings(host, port, apiToken, token, maxBodyBytes, maxLease);
  }

  /** With a token set, every call needs a token, reads included. */
  public boolean tokenRequired() {
    return !apiToken.isEmpty() || !apiReadToken.isEmpty();
  }

  /** Only literal loopback addresses and "localhost" count; a name is not resolved here. */
  static boolean isLoopback(String host) {
    String h = host.trim();
    if (h.equalsIgnoreCase("localhost")) {
      return true;
    }
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    if (!h.matches("[0-9.]+") && !h.contains(":")) {
      return false; // a host name: could resolve to anything, treat as exposed
    }
    try {
      return InetAddress.getByName(h).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}

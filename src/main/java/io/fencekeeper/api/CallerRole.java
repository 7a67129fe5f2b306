package io.fencekeeper.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@code GET /api/whoami}: what the presented token allows, so the dashboard can ask for a token
 * once and show actions disabled (with the reason) instead of letting them fail. {@code open}: the
 * node has no token, everything is allowed from loopback; {@code admin}: the token that mutates;
 * {@code read}: a token for reading only. A missing or wrong token on a node that has one is 401.
 */
final class CallerRole {

  static final String OPEN = "open";
  static final String ADMIN = "admin";
  static final String READ = "read";

  private final ApiSettings settings;
  private final byte[] adminAuthorization;

  CallerRole(ApiSettings settings) {
    this.settings = settings;
    this.adminAuthorization = ("Bearer " + settings.apiToken()).getBytes(StandardCharsets.UTF_8);
  }

  /** The role of a presented Authorization header; empty when it grants nothing. */
  Optional<String> of(String authorization) {
    if (!settings.tokenRequired()) {
      return Optional.of(OPEN);
    }
    byte[] presented =
        (authorization == null ? "" : authorization).getBytes(StandardCharsets.UTF_8);
    // constant time, as the router's check: no hint of how many characters were right
    if (MessageDigest.isEqual(adminAuthorization, presented)) {
      return Optional.of(ADMIN);
    }
    // the read-only token (FENCEKEEPER_API_READ_TOKEN) answers READ here once the node has one
    return Optional.empty();
  }

  CompletionStage<ApiResponse> whoami(ApiCall call) {
    String role =
        of(call.authorization())
            .orElseThrow(
                () ->
                    new ApiError(
                        401,
                        "unauthorized",
                        call.authorization().isEmpty()
                            ? "this node has a token: send 'Authorization: Bearer <token>'"
                            : "the bearer token is not valid"));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("role", role);
    body.put("tokenRequired", settings.tokenRequired());
    return CompletableFuture.completedFuture(ApiResponse.ok(body));
  }
}

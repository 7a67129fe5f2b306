package io.fencekeeper.api.http;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@code GET /api/whoami}: what the presented token allows, so the dashboard can ask for a token
 * once and show actions disabled (with the reason) instead of letting them fail. {@code open}: the
 * node has no token, everything is allowed from loopback; {@code admin}: the API token; {@code
 * read}: the read-only token. The token itself was checked by {@link ApiAuth} (401 without one on a
 * node that has one).
 */
public final class CallerRole {

  private final boolean tokenRequired;

  public CallerRole(ApiSettings settings) {
    this.tokenRequired = settings.tokenRequired();
  }

  public CompletionStage<ApiResponse> whoami(ApiCall call) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("role", call.role().name().toLowerCase(Locale.ROOT));
    body.put("tokenRequired", tokenRequired);
    return CompletableFuture.completedFuture(ApiResponse.ok(body));
  }
}

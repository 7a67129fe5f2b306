package io.fencekeeper.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * Who may call what. With a token configured, mutating endpoints need {@code Authorization: Bearer
 * <token>}; without one, the API only ever listens on loopback ({@link ApiSettings}).
 */
final class ApiAuth {

  private final boolean tokenRequired;
  private final byte[] expectedAuthorization;

  ApiAuth(ApiSettings settings) {
    this.tokenRequired = settings.tokenRequired();
    this.expectedAuthorization = ("Bearer " + settings.apiToken()).getBytes(StandardCharsets.UTF_8);
  }

  /** Invariant: a missing or wrong token changes nothing, so it is checked before the body. */
  void authorize(HttpRequest request, ApiEndpoint endpoint) {
    if (!tokenRequired || !endpoint.mutating()) {
      return;
    }
    String presented = request.getHeader("Authorization").map(h -> h.value()).orElse("");
    // constant time: the comparison must not tell an attacker how many characters were right
    if (!MessageDigest.isEqual(expectedAuthorization, presented.getBytes(StandardCharsets.UTF_8))) {
      throw new ApiError(
          401,
          "unauthorized",
          presented.isEmpty()
              ? "this endpoint changes state and needs 'Authorization: Bearer <token>'"
              : "the bearer token is not valid");
    }
  }
}

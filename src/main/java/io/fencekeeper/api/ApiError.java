package io.fencekeeper.api;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A request the API refuses, as the error envelope {@code {"error": code, "message": sentence}}
 * plus optional fields (e.g. {@code field}, {@code presentedToken}). Thrown by parsing code and
 * turned into a response in one place; never reaches Pekko's default handlers.
 */
public final class ApiError extends RuntimeException {

  private final int status;
  private final String code;
  private final Map<String, Object> extra;

  public ApiError(int status, String code, String message, Map<String, Object> extra) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.extra = extra;
  }

  public ApiError(int status, String code, String message) {
    this(status, code, message, Map.of());
  }

  public static ApiError badRequest(String field, String message) {
    return new ApiError(400, "bad_request", message, Map.of("field", field));
  }

  public static ApiError notFound(String code, String message) {
    return new ApiError(404, code, message);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  /** The envelope: error and message first, then the extra fields. */
  public Map<String, Object> body() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", code);
    body.put("message", getMessage());
    body.putAll(extra);
    return body;
  }
}

package io.fencekeeper.api.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

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

  /** A query parameter the endpoint does not take. */
  public static ApiError unknownParameter(String name) {
    return badRequest(nameOf(name), "unknown query parameter " + quotedName(name));
  }

  /** Field, parameter and key names an answer may repeat: short, plain identifiers. */
  private static final Pattern PLAIN_NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

  /**
   * What an answer calls a name the caller sent (an unknown field or parameter, a repeated key):
   * the name itself when it is a plain identifier, so a typo such as {@code tokn} is easy to see;
   * otherwise a placeholder, because an answer never echoes arbitrary input (docs/security.md,
   * "What errors say").
   */
  public static String nameOf(String name) {
    return name != null && PLAIN_NAME.matcher(name).matches() ? name : "(not shown)";
  }

  /** {@link #nameOf} in a sentence: {@code 'tokn'}, or "a name that is not a plain identifier". */
  public static String quotedName(String name) {
    return name != null && PLAIN_NAME.matcher(name).matches()
        ? "'" + name + "'"
        : "(a name that is not a plain identifier, not shown)";
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

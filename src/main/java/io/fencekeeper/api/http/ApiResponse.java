package io.fencekeeper.api.http;

/**
 * What a handler answers: a status and a JSON body (null for none), raw text, or a streamed body.
 */
public record ApiResponse(
    int status, Object json, String text, String contentType, ApiStream stream) {

  public static ApiResponse json(int status, Object body) {
    return new ApiResponse(status, body, null, null, null);
  }

  public static ApiResponse ok(Object body) {
    return json(200, body);
  }

  public static ApiResponse noContent() {
    return new ApiResponse(204, null, null, null, null);
  }

  public static ApiResponse text(String text, String contentType) {
    return new ApiResponse(200, null, text, contentType, null);
  }

  public static ApiResponse stream(ApiStream stream) {
    return new ApiResponse(200, null, null, null, stream);
  }
}

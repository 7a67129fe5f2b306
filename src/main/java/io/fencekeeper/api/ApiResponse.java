package io.fencekeeper.api;

/**
 * What a handler answers: a status and a JSON body (null for none), raw text, or a streamed body.
 */
record ApiResponse(int status, Object json, String text, String contentType, ApiStream stream) {

  static ApiResponse json(int status, Object body) {
    return new ApiResponse(status, body, null, null, null);
  }

  static ApiResponse ok(Object body) {
    return json(200, body);
  }

  static ApiResponse noContent() {
    return new ApiResponse(204, null, null, null, null);
  }

  static ApiResponse text(String text, String contentType) {
    return new ApiResponse(200, null, text, contentType, null);
  }

  static ApiResponse stream(ApiStream stream) {
    return new ApiResponse(200, null, null, null, stream);
  }
}

package io.fencekeeper.sdk.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The node's lease API over HTTP (the JDK client, Jackson): one POST, one answer. A transport
 * failure is thrown; every HTTP answer, refusals included, is returned for the caller to read.
 */
final class LeaseApi {

  /** One answer: its status, its JSON body (an empty object when it had none) and Retry-After. */
  record Answer(int status, JsonNode body, Duration retryAfter) {
    String error() {
      return body.path("error").asText("");
    }
  }

  static final ObjectMapper JSON = new ObjectMapper();

  private final URI node;
  private final String token;
  private final Duration timeout;
  private final HttpClient http;

  LeaseApi(URI node, String token, Duration timeout) {
    this.node = node;
    this.token = token;
    this.timeout = timeout;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout)
            .build();
  }

  static ObjectNode body() {
    return JSON.createObjectNode();
  }

  /** {@code POST /api/runs/{runId}/claim-next}. */
  Answer claimNext(String runId, ObjectNode body) throws IOException, InterruptedException {
    return post("/api/runs/" + segment(runId) + "/claim-next", body);
  }

  /** {@code POST /api/items/{itemId}/{command}}: renew, complete, ambiguous, fail, release. */
  Answer item(String itemId, String command, ObjectNode body)
      throws IOException, InterruptedException {
    return post("/api/items/" + segment(itemId) + "/" + command, body);
  }

  private Answer post(String path, ObjectNode body) throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(node.resolve(path))
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
    if (token != null && !token.isEmpty()) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<byte[]> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    JsonNode json =
        response.body().length == 0 ? JSON.createObjectNode() : readOrEmpty(response.body());
    Duration retryAfter = null;
    if (json.has("retryAfterMillis")) {
      retryAfter = Duration.ofMillis(json.path("retryAfterMillis").asLong());
    } else {
      String header = response.headers().firstValue("Retry-After").orElse(null);
      if (header != null && header.matches("[0-9]{1,6}")) {
        retryAfter = Duration.ofSeconds(Long.parseLong(header));
      }
    }
    return new Answer(response.statusCode(), json, retryAfter);
  }

  private static JsonNode readOrEmpty(byte[] bytes) {
    try {
      return JSON.readTree(bytes);
    } catch (IOException e) {
      return JSON.createObjectNode(); // a proxy's page, not the node's: the status says enough
    }
  }

  static String segment(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }
}

package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.client.ApiClient;
import io.fencekeeper.api.http.ApiJson;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * What the commands that read a node's HTTP API share: where the node is, its token, whether to
 * print the API's JSON as it is, and the one GET with its error reporting. A picocli mixin.
 */
final class NodeApiOptions {

  @Option(
      names = "--url",
      defaultValue = "${FENCEKEEPER_URL:-http://127.0.0.1:8080}",
      description = "the node's HTTP API (default: ${DEFAULT-VALUE})")
  URI url;

  @Option(
      names = "--token",
      defaultValue = "${FENCEKEEPER_API_TOKEN:-}",
      description = "bearer token (default: $FENCEKEEPER_API_TOKEN)")
  String token;

  @Option(names = "--json", description = "print the API's JSON as it is")
  boolean json;

  final ObjectMapper mapper = ApiJson.mapper();

  /** The body of a 200 answer; empty after telling {@code err} why there is none. */
  Optional<JsonNode> get(String path, PrintStream err) throws IOException, InterruptedException {
    ApiClient.Answer answer;
    try {
      answer = new ApiClient(url, token).get(path);
    } catch (IOException e) {
      err.println("cannot reach " + url + ": " + e.getMessage());
      return Optional.empty();
    }
    if (answer.status() != 200) {
      err.println(answer.status() + " " + answer.body());
      return Optional.empty();
    }
    return Optional.of(mapper.readTree(answer.body()));
  }

  /** With {@code --json}, prints the body pretty and says so; otherwise prints nothing. */
  boolean printedAsJson(JsonNode body, PrintStream out) throws IOException {
    if (json) {
      out.println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(body));
    }
    return json;
  }
}

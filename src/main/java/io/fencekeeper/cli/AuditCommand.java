package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.ApiClient;
import io.fencekeeper.api.ApiJson;
import java.io.PrintStream;
import java.net.URI;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code audit <itemId>}: an item's journal, one event a line, from a node's HTTP API. */
@Command(name = "audit", description = "Show an item's audit trail via a node's HTTP API.")
public final class AuditCommand implements Callable<Integer> {

  @Parameters(
      index = "0",
      description = "item id, e.g. payment-reconciliation/2026-11-29/acct-1/c-1")
  String itemId;

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

  private PrintStream out;
  private PrintStream err;

  @Override
  public Integer call() throws Exception {
    out = System.out;
    err = System.err;
    ApiClient.Answer answer;
    try {
      answer = new ApiClient(url, token).get("/api/items/" + ApiClient.segment(itemId) + "/audit");
    } catch (java.io.IOException e) {
      err.println("cannot reach " + url + ": " + e.getMessage());
      return 1;
    }
    if (answer.status() != 200) {
      err.println(answer.status() + " " + answer.body());
      return 1;
    }
    ObjectMapper mapper = ApiJson.mapper();
    JsonNode body = mapper.readTree(answer.body());
    if (json) {
      out.println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(body));
      return 0;
    }
    out.println(body.path("itemId").asText());
    for (JsonNode event : body.path("events")) {
      out.printf(
          "%5d  %s  %-22s %s%n",
          event.path("sequenceNr").asLong(),
          event.path("at").asText(),
          event.path("type").asText(),
          mapper.writeValueAsString(event.path("fields")));
    }
    return 0;
  }
}

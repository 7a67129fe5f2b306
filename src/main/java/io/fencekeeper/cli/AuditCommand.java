package io.fencekeeper.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.client.ApiClient;
import java.io.PrintStream;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code audit <itemId>}: an item's journal, one event a line, from a node's HTTP API. */
@Command(name = "audit", description = "Show an item's audit trail via a node's HTTP API.")
public final class AuditCommand implements Callable<Integer> {

  @Parameters(
      index = "0",
      description = "item id, e.g. payment-reconciliation/2026-11-29/acct-1/c-1")
  String itemId;

  @Mixin NodeApiOptions api;

  private PrintStream out;
  private PrintStream err;

  @Override
  public Integer call() throws Exception {
    out = System.out;
    err = System.err;
    String path = "/api/items/" + ApiClient.segment(itemId) + "/audit?limit=1000";
    Optional<JsonNode> fetched = api.get(path, err);
    boolean first = true;
    // the API answers a page at a time; "next" is there while more may follow
    while (fetched.isPresent()) {
      JsonNode body = fetched.get();
      if (api.printedAsJson(body, out)) {
        // JSON lines: one page per line, in order
      } else {
        if (first) {
          out.println(body.path("itemId").asText());
        }
        for (JsonNode event : body.path("events")) {
          printEvent(out, event, api.mapper);
        }
      }
      first = false;
      if (!body.has("next")) {
        return 0;
      }
      fetched = api.get(path + "&after=" + body.path("next").asLong(), err);
    }
    return first ? 1 : 2;
  }

  /** One event of an audit, as the API shows it, on one line (an archive's too). */
  static void printEvent(PrintStream out, JsonNode event, ObjectMapper mapper)
      throws JsonProcessingException {
    out.printf(
        "%5d  %s  %-22s %s%n",
        event.path("sequenceNr").asLong(),
        event.path("at").asText(),
        event.path("type").asText(),
        mapper.writeValueAsString(event.path("fields")));
  }
}

package io.fencekeeper.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.http.HttpProtocol;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * An item's provider calls made by hand, the way a db-scheduler task would make them: {@code GET
 * /v1/plans}, then, when there is something to do, {@code POST /v1/cleanups} with the item's
 * idempotency key (docs/provider-protocol.md), synchronously on the calling thread. No fencing
 * token: db-scheduler has none. Also reads the sim's {@code GET /ledger}.
 */
final class ProviderCalls {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  /** What the sim has applied: effects per idempotency key, and every cleanup request received. */
  record Ledger(Map<String, Long> effects, long requests) {}

  private final URI baseUrl;
  private final HttpClient client;

  ProviderCalls(URI baseUrl) {
    String url = baseUrl.toString();
    this.baseUrl = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
  }

  /**
   * One item: its plan, then its cleanup if the plan has an action. Returns the calls made (1 or
   * 2); throws on any answer but a plan or an applied (or replayed) cleanup.
   */
  int reconcile(ItemId item) throws IOException, InterruptedException {
    Plan plan = plan(item);
    if (plan.nothingToDo()) {
      return 1;
    }
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(baseUrl + HttpProtocol.CLEANUPS_PATH))
            .timeout(TIMEOUT)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .header(HttpProtocol.IDEMPOTENCY_KEY, item.idempotencyKey())
            // the protocol requires a token; db-scheduler has none to give, so every call of a
            // task carries the first one (equal to the key's mark, never stale, never fencing)
            .header(HttpProtocol.FENCING_TOKEN, "1")
            .POST(
                HttpRequest.BodyPublishers.ofByteArray(
                    HttpProtocol.json()
                        .writeValueAsBytes(HttpProtocol.CleanupRequest.of(item, plan))))
            .build();
    HttpResponse<String> response = send(request);
    if (response.statusCode() != 201 && response.statusCode() != 200) {
      throw new IOException(
          "POST "
              + HttpProtocol.CLEANUPS_PATH
              + " answered "
              + response.statusCode()
              + ": "
              + response.body());
    }
    return 2;
  }

  Plan plan(ItemId item) throws IOException, InterruptedException {
    URI uri = URI.create(baseUrl + HttpProtocol.planPath(item));
    HttpResponse<String> response = send(get(uri));
    if (response.statusCode() != 200) {
      throw new IOException(
          "GET "
              + HttpProtocol.PLANS_PATH
              + " answered "
              + response.statusCode()
              + ": "
              + response.body());
    }
    return HttpProtocol.json().readValue(response.body(), Plan.class);
  }

  Ledger ledger() throws IOException, InterruptedException {
    HttpResponse<String> response = send(get(URI.create(baseUrl + "/ledger")));
    if (response.statusCode() != 200) {
      throw new IOException("GET /ledger answered " + response.statusCode());
    }
    JsonNode body = HttpProtocol.json().readTree(response.body());
    Map<String, Long> effects = new HashMap<>();
    body.get("effects")
        .fields()
        .forEachRemaining(e -> effects.put(e.getKey(), e.getValue().asLong()));
    return new Ledger(effects, body.get("requests").asLong());
  }

  /** Sends; a failure without an answer says which call it was. */
  private HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
    try {
      return client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IOException(request.method() + " " + request.uri().getPath() + ": " + e, e);
    }
  }

  private static HttpRequest get(URI uri) {
    return HttpRequest.newBuilder(uri)
        .timeout(TIMEOUT)
        .header("Accept", "application/json")
        .GET()
        .build();
  }
}

package io.fencekeeper.cluster;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * An external worker process that dies right after its first claim of an item, before a word more
 * (what a poison item does to a worker, or a crash at the worst moment): {@code node itemId
 * leaseMillis}. It prints the answer and its worker id, then halts as a kill -9 would.
 */
public final class ClaimThenCrash {

  private ClaimThenCrash() {}

  public static void main(String[] args) throws Exception {
    String node = args[0];
    String itemId = args[1];
    String workerId = "crasher-" + UUID.randomUUID().toString().substring(0, 8);
    String requestId = UUID.randomUUID().toString();
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> answer;
    // a 503 (the item's shard still starting, a loaded machine) may have been granted: the same
    // claim again, with the same request id, until the node answers it
    do {
      answer =
          http.send(
              HttpRequest.newBuilder(
                      URI.create(
                          node
                              + "/api/items/"
                              + URLEncoder.encode(itemId, StandardCharsets.UTF_8)
                              + "/claim"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"workerId\":\""
                              + workerId
                              + "\",\"leaseMillis\":"
                              + args[2]
                              + ",\"requestId\":\""
                              + requestId
                              + "\"}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      System.out.println("claim " + answer.statusCode() + " by " + workerId + ": " + answer.body());
    } while (answer.statusCode() >= 500);
    System.out.flush();
    Runtime.getRuntime().halt(137);
  }
}

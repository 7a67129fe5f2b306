package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 36: what the HTTP server itself answers when its request timeout passes is the API's JSON
 * envelope, not Pekko's plain-text 503, and it says what the caller does not know. The node here
 * waits longer for a create (create-wait 10 s) than its server lets a request run (2 s), and the
 * create's SQL scope sleeps 4 s in PostgreSQL before its rows come, so the timeout fires while the
 * route still waits.
 */
class RequestTimeoutApiTest {

  private static ApiTestNode api;

  @BeforeAll
  static void nodeWithAShortRequestTimeout() throws SQLException {
    Map<String, Object> settings = ScopeSqlSource.settings(5);
    settings.put("fencekeeper.create-wait", "10s");
    settings.put("pekko.http.server.request-timeout", "2s");
    api = ApiTestNode.fresh(settings);
  }

  @AfterAll
  static void close() {
    api.close();
  }

  @Test
  void aRequestThatOutlivesTheRequestTimeoutGetsTheJsonEnvelopeAndTheCommandMayStillApply()
      throws Exception {
    String body =
        "{\"job\":\"timeout\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
            + ApiTestNode.DEADLINE
            + "\",\"maxAttempts\":3,\"scope\":{\"type\":\"sql\",\"query\":\"select account_id,"
            + " cursor from accounts, pg_sleep(4) order by account_id\"}}";
    String answer = postRuns(body, body.length());
    assertTrue(answer.startsWith("HTTP/1.1 503"), answer);
    assertTrue(answer.contains("Content-Type: application/json"), answer);
    assertTrue(answer.contains("Cache-Control: no-store"), answer);
    assertTrue(answer.contains("\"error\":\"request_timeout\""), answer);
    assertTrue(answer.contains("whether a command was applied is unknown"), answer);
    // the answer said "unknown", and here the create goes on: reading the run shows it
    ApiTestNode.await(
        () -> api.get("/api/runs/" + ApiTestNode.seg("timeout/2026-11-29")).tree(),
        run ->
            run.path("state").asText().equals("RUNNING")
                && run.path("counts").path("total").asInt() == 5,
        Duration.ofSeconds(60),
        "the create that timed out to be staged anyway");
  }

  /**
   * A body that stops coming is the caller's connection at fault, not its JSON: 408 naming that,
   * once the node has waited 10 s for the rest, and nothing is created.
   */
  @Test
  void aBodyThatStopsComingIs408AndCreatesNothing() throws Exception {
    String body =
        "{\"job\":\"stalled\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
            + ApiTestNode.DEADLINE
            + "\",\"maxAttempts\":3,\"scope\":{\"type\":\"accounts\",\"accounts\":[]}}";
    String answer = postRuns(body, 10);
    assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
    assertTrue(answer.contains("\"error\":\"body_timeout\""), answer);
    assertEquals(404, api.get("/api/runs/" + ApiTestNode.seg("stalled/2026-11-29")).status());
  }

  /**
   * POST /api/runs over a raw connection, announcing all of {@code body} but sending only its first
   * {@code sent} characters; returns the answer as it came, headers included.
   */
  private static String postRuns(String body, int sent) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", api.port)) {
      socket.setSoTimeout(60_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                  + ApiTestNode.TOKEN
                  + "\r\nContent-Type: application/json\r\nContent-Length: "
                  + body.length()
                  + "\r\n\r\n"
                  + body.substring(0, sent))
              .getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      return readAnswer(socket.getInputStream());
    }
  }

  /** The status line, headers and as much of the body as its Content-Length says. */
  private static String readAnswer(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        return head.toString();
      }
      head.append((char) b);
    }
    Matcher length = Pattern.compile("(?i)content-length: (\\d+)").matcher(head);
    int bodyLength = length.find() ? Integer.parseInt(length.group(1)) : 0;
    return head + new String(in.readNBytes(bodyLength), StandardCharsets.UTF_8);
  }
}

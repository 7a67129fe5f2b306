package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.ProviderTestSupport.awaitCondition;
import static io.fencekeeper.provider.ProviderTestSupport.raw;
import static io.fencekeeper.provider.sim.SimConnection.CLEANUP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.provider.http.HttpProtocol;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The sim's HTTP server itself (Pekko HTTP): dropped connections, refusals, its flags. */
class SimProviderServerTest {

  private SimProviderServer sim;

  @BeforeEach
  void start() {
    sim = SimProviderServer.start(0, SimFaults.NONE, 5L);
  }

  @AfterEach
  void stop() {
    sim.close();
  }

  @Test
  void anAcceptedCleanupThatIsNeverAnsweredDropsTheConnectionWithoutAByte() throws Exception {
    sim.setFaults(SimFaults.NONE.withTimeoutAfterAccept(1.0, 0));

    Reply reply = post("fk-drop", CLEANUP);

    assertEquals("", reply.text(), "not even a status line");
    assertEquals(java.util.Map.of("fk-drop", 1), sim.effects(), "applied all the same");
    awaitCondition(
        Duration.ofSeconds(5), () -> sim.openConnections() == 0, "the dropped connection is gone");
    assertEquals(0, stats().get("inFlight").asInt(), "the drop ended its time in flight");
  }

  @Test
  void aHeldCleanupStaysSilentForTheHoldThenDrops() throws Exception {
    sim.setFaults(SimFaults.NONE.withTimeoutAfterAccept(1.0, 400));

    long start = System.nanoTime();
    Reply reply = post("fk-hold", CLEANUP);
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertEquals("", reply.text());
    assertTrue(took.toMillis() >= 400, "dropped after " + took);
    assertEquals(1, sim.peakInFlight());
    assertEquals(0, stats().get("inFlight").asInt());
  }

  @Test
  void refusalsKeepTheirEnvelopes() throws Exception {
    String big = CLEANUP.replace("\"d\"", "\"" + "x".repeat(70_000) + "\"");

    Reply tooBig = post("fk-big", big);
    HttpResponse<String> wrongMethod = raw(sim.baseUrl(), "DELETE", "/v1/cleanups", null);
    HttpResponse<String> unknown = raw(sim.baseUrl(), "GET", "/v2/anything", null);
    HttpResponse<String> noAccount = raw(sim.baseUrl(), "GET", "/v1/plans?cursor=c-1", null);
    HttpResponse<String> unknownKey = raw(sim.baseUrl(), "GET", "/v1/cleanups/fk-none", null);

    assertTrue(tooBig.text().startsWith("HTTP/1.1 413"), tooBig.text());
    assertTrue(tooBig.text().contains("\"error\":\"payload_too_large\""), tooBig.text());
    assertTrue(tooBig.text().contains("request body exceeds 65536 bytes"), tooBig.text());
    assertEquals(405, wrongMethod.statusCode());
    assertEquals("POST", wrongMethod.headers().firstValue("Allow").orElseThrow());
    assertTrue(wrongMethod.body().contains("\"error\":\"method_not_allowed\""));
    assertEquals(404, unknown.statusCode());
    assertTrue(unknown.body().contains("\"error\":\"unknown_endpoint\""), unknown.body());
    assertEquals(400, noAccount.statusCode());
    assertTrue(noAccount.body().contains("is required"), noAccount.body());
    assertEquals(404, unknownKey.statusCode());
    assertTrue(unknownKey.body().contains("no cleanup was applied"), unknownKey.body());
    assertEquals(java.util.Map.of(), sim.effects());
  }

  /**
   * A body whose announced length is over the limit is refused as too large before its bytes
   * arrive: the same answer as when it comes whole with the headers (which a loaded machine does
   * not guarantee).
   */
  @Test
  void aBodyAnnouncedTooLargeIsRefusedBeforeItArrives() throws Exception {
    Reply tooBig = post("fk-announced", 70_000, new byte[0]);

    assertTrue(tooBig.text().startsWith("HTTP/1.1 413"), tooBig.text());
    assertTrue(tooBig.text().contains("request body exceeds 65536 bytes"), tooBig.text());
    assertEquals(java.util.Map.of(), sim.effects());
  }

  @Test
  void theThreadsFlagIsStillAccepted() {
    SimProviderCommand command = new SimProviderCommand();
    new CommandLine(command).parseArgs("--port", "0", "--threads", "4");

    assertEquals(4, command.threads);
  }

  @Test
  void theProtocolFlagNamesAVersionAndAnotherIsAUsageError() {
    SimProviderCommand old = new SimProviderCommand();
    new CommandLine(old).parseArgs("--port", "0", "--protocol", "1.0");
    SimProviderCommand wrong = new SimProviderCommand();
    CommandLine line = new CommandLine(wrong);

    assertEquals(SimProtocol.V1_0, SimProtocol.parse(old.protocol));
    assertEquals("1.1", new SimProviderCommand().protocol, "1.1 unless asked");
    assertEquals(64, line.execute("--port", "0", "--protocol", "2.0"), "refused before it binds");
  }

  private JsonNode stats() throws IOException {
    return HttpProtocol.json().readTree(raw(sim.baseUrl(), "GET", "/admin/stats", null).body());
  }

  /** What came back on the socket until the sim closed it (or 10 s passed). */
  private record Reply(String text) {}

  private Reply post(String key, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return post(key, bytes.length, bytes);
  }

  /** Announces {@code contentLength} bytes and sends {@code bytes} (fewer: the rest never come). */
  private Reply post(String key, int contentLength, byte[] bytes) throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), sim.port())) {
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(
              ("POST /v1/cleanups HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                      + "Idempotency-Key: "
                      + key
                      + "\r\nFencing-Token: 1\r\nConnection: close\r\nContent-Length: "
                      + contentLength
                      + "\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().write(bytes);
      socket.getOutputStream().flush();
      ByteArrayOutputStream reply = new ByteArrayOutputStream();
      InputStream in = socket.getInputStream();
      byte[] buffer = new byte[8192];
      try {
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
          reply.write(buffer, 0, n);
        }
      } catch (SocketException reset) {
        // an aborted connection: what came before the reset is the reply
      }
      return new Reply(reply.toString(StandardCharsets.UTF_8));
    }
  }
}

package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.api.stream.RunEventStreamsTest;
import io.fencekeeper.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 25, item 1: a client that resets its connection (SO_LINGER 0) right after asking for a live
 * stream must not keep the stream's slot, and one caller cannot hold every slot: a token holds at
 * most {@code max-event-streams-per-token} (24 of 32), one remote address at most {@code
 * max-event-streams-per-address} (8). Callers from other addresses are other loopback addresses
 * (127.0.x.y): Linux routes all of 127/8 to the node on 127.0.0.1.
 */
class EventStreamSlotsTest {

  static final String READ_TOKEN = "read-only-token-0123456789";

  static ApiTestNode node() {
    return ApiTestNode.fresh(Map.of("fencekeeper.http.api-read-token", READ_TOKEN));
  }

  /** A stream asked for on a socket of its own that reads the answer's head and nothing more. */
  static final class RawStream implements AutoCloseable {
    final Socket socket;
    final String head;
    final String body;

    RawStream(ApiTestNode node, String from, String path, String token) throws IOException {
      socket = connect(node, from);
      socket.setSoTimeout(30_000);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      String text = "";
      try {
        socket.getOutputStream().write(request(path, token));
        InputStream in = socket.getInputStream();
        while (!bytes.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
          int b = in.read();
          if (b < 0) {
            break;
          }
          bytes.write(b);
        }
        Matcher length =
            Pattern.compile("(?i)content-length: (\\d+)")
                .matcher(bytes.toString(StandardCharsets.ISO_8859_1));
        text =
            length.find()
                ? new String(
                    in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8)
                : "";
      } catch (IOException closed) {
        // the server closed the connection when it accepted it (its address holds its share)
      }
      head = bytes.toString(StandardCharsets.ISO_8859_1);
      body = text;
    }

    int status() {
      return head.length() < 12 ? -1 : Integer.parseInt(head.substring(9, 12));
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  static Socket connect(ApiTestNode node, String from) throws IOException {
    Socket socket = new Socket();
    socket.bind(new InetSocketAddress(from, 0));
    socket.connect(new InetSocketAddress("127.0.0.1", node.port), 5_000);
    return socket;
  }

  static byte[] request(String path, String token) {
    return ("GET "
            + path
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + token
            + "\r\nAccept: text/event-stream\r\n\r\n")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** A stream asked for; closed at once when it was refused a slot. */
  static RawStream openOrClose(ApiTestNode node, String from, String path, String token) {
    try {
      RawStream stream = new RawStream(node, from, path, token);
      if (stream.status() != 200) {
        stream.close();
      }
      return stream;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The review's request: ask for a stream, then close at once with an RST. */
  static void resetRightAfterAsking(ApiTestNode node, String from, String path) {
    try {
      Socket socket = connect(node, from);
      socket.getOutputStream().write(request(path, ApiTestNode.TOKEN));
      socket.getOutputStream().flush();
      socket.setSoLinger(true, 0);
      socket.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The gauge of live streams on {@code /metrics}. */
  static int openStreams(ApiTestNode node) {
    Matcher m =
        Pattern.compile("(?m)^fencekeeper_http_event_streams(\\{[^}]*\\})? ([0-9.]+)$")
            .matcher(node.get("/metrics").body());
    return m.find() ? (int) Double.parseDouble(m.group(2)) : -1;
  }

  @Test
  void resetsRightAfterAskingGiveEverySlotBack() throws Exception {
    try (ApiTestNode node = node()) {
      String runId = node.createRun(ApiTestNode.newJob("resets"), 1);
      List<String> paths = List.of("/api/events/runs", "/api/runs/" + seg(runId) + "/events");
      long started = System.nanoTime();
      // 80 resets from 20 addresses: more than the node's 32 slots, within each address's 8
      for (int i = 0; i < 80; i++) {
        resetRightAfterAsking(node, "127.0.1." + (1 + i % 20), paths.get(i % 2));
      }
      Await.until(
          Duration.ofSeconds(60), "every reset stream's slot back", () -> openStreams(node) == 0);
      System.out.printf(
          "SLOTS: 80 reset stream requests, every slot back %.1f s after the first%n",
          (System.nanoTime() - started) / 1e9);

      // all 32 slots can be used again: 4 addresses x 8 streams that never read, 24 of them with
      // the API token (its cap), 8 with the read token
      List<RawStream> streams = new ArrayList<>();
      try {
        for (int i = 0; i < 32; i++) {
          String token = i < 24 ? ApiTestNode.TOKEN : READ_TOKEN;
          String from = "127.0.2." + (1 + i / 8);
          String path = paths.get(i % 2);
          // a reset request the loaded server accepts only now holds a slot until its answer
          // fails to go out: the slot comes back, so a refusal is asked again until the deadline
          RawStream stream =
              Await.until(
                  Duration.ofSeconds(30),
                  "stream " + i + " served",
                  () -> openOrClose(node, from, path, token),
                  opened -> !opened.body.contains("\"too_many_streams\""));
          streams.add(stream);
          assertEquals(200, stream.status(), "stream " + i + ": " + stream.head + stream.body);
        }
        try (RawStream full = new RawStream(node, "127.0.2.9", paths.get(0), READ_TOKEN)) {
          assertEquals(503, full.status(), full.head);
          assertTrue(full.body.contains("\"too_many_streams\""), full.body);
          assertTrue(full.body.contains("(fencekeeper.http.max-event-streams)"), full.body);
        }
        assertEquals(32, openStreams(node));
        assertEquals(200, node.get("/api/runs").status(), "the node still answers");
      } finally {
        for (RawStream stream : streams) {
          stream.close(); // the client goes away: a FIN, not a reset
        }
      }
      Await.until(
          Duration.ofSeconds(60), "closed streams' slots back", () -> openStreams(node) == 0);
      try (RunEventStreamsTest.EventReader dashboard =
          RunEventStreamsTest.open(node, "/api/events/runs")) {
        assertEquals(200, dashboard.response.statusCode());
        assertEquals("runs", dashboard.next(node).name());
      }
    }
  }

  @Test
  void oneTokenOrOneAddressCannotHoldEverySlot() throws Exception {
    try (ApiTestNode node = node()) {
      List<RawStream> streams = new ArrayList<>();
      try {
        // 200 connections of one address with the read token that never read: 8 get a stream,
        // the others of the address's 32 connections are refused a stream, the rest closed
        int served = 0;
        int closed = 0;
        String refusal = null;
        for (int i = 0; i < 200; i++) {
          RawStream stream = new RawStream(node, "127.0.3.1", "/api/events/runs", READ_TOKEN);
          streams.add(stream);
          if (stream.status() == 200) {
            served++;
          } else if (stream.status() == -1) {
            closed++;
          } else {
            assertEquals(503, stream.status(), stream.head);
            refusal = stream.body;
          }
        }
        assertEquals(8, served, "streams one address holds");
        assertTrue(refusal.contains("max-event-streams-per-address"), refusal);
        assertTrue(closed >= 200 - 32, "connections over the address's 32 closed: " + closed);
        // from more addresses, the read token reaches its own cap: 24
        for (int i = 0; i < 16; i++) {
          RawStream stream =
              new RawStream(node, "127.0.3." + (2 + i / 8), "/api/events/runs", READ_TOKEN);
          streams.add(stream);
          assertEquals(200, stream.status(), stream.head);
        }
        try (RawStream refused = new RawStream(node, "127.0.3.9", "/api/events/runs", READ_TOKEN)) {
          assertEquals(503, refused.status());
          assertTrue(refused.body.contains("max-event-streams-per-token"), refused.body);
        }
        // the API token's dashboard still gets its stream, and the node answers
        try (RunEventStreamsTest.EventReader dashboard =
            RunEventStreamsTest.open(node, "/api/events/runs")) {
          assertEquals(200, dashboard.response.statusCode());
          assertEquals("runs", dashboard.next(node).name());
        }
        long asked = System.nanoTime();
        ApiTestNode.Answer runs = node.get("/api/runs");
        assertEquals(200, runs.status());
        System.out.printf(
            "SLOTS: GET /api/runs answered in %d ms with %d held streams and %d refused or closed"
                + " connections open%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked),
            openStreams(node),
            streams.size() - 24);
      } finally {
        for (RawStream stream : streams) {
          stream.close();
        }
      }
    }
  }
}

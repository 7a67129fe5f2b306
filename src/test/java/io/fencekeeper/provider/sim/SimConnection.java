package io.fencekeeper.provider.sim;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One raw HTTP/1.1 connection to the sim, for what the JDK's client hides from a test: requests
 * pipelined on one connection, a body sent in parts, a connection dropped without an answer.
 */
final class SimConnection implements AutoCloseable {

  /** A cleanup body the sim accepts. */
  static final String CLEANUP =
      "{\"itemId\":\"j/2026-11-29/a-1/c-1\",\"job\":\"j\",\"businessDate\":\"2026-11-29\","
          + "\"accountId\":\"a-1\",\"cursor\":\"c-1\",\"action\":\"write-off-residual\","
          + "\"amountMinor\":1,\"description\":\"d\"}";

  private final Socket socket;
  private final InputStream in;

  private SimConnection(Socket socket) throws IOException {
    this.socket = socket;
    this.in = socket.getInputStream();
  }

  /** Connected to the sim on loopback; a read waits at most 10 s. */
  static SimConnection open(SimProviderServer sim) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), sim.port());
    socket.setSoTimeout(10_000);
    return new SimConnection(socket);
  }

  /**
   * The head of a {@code POST /v1/cleanups} with {@code key} and fencing token 1; {@code framing}
   * is the header that delimits the body (Content-Length or Transfer-Encoding).
   */
  static String cleanupHead(String key, String framing) {
    return "POST /v1/cleanups HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        + "Idempotency-Key: "
        + key
        + "\r\nFencing-Token: 1\r\n"
        + framing
        + "\r\n\r\n";
  }

  /** A whole {@code POST /v1/cleanups} with {@code body}, its length announced. */
  static String cleanup(String key, String body) {
    return cleanupHead(key, "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length)
        + body;
  }

  /** {@link #CLEANUP} padded with white space to exactly {@code bytes} bytes. */
  static String cleanupOf(int bytes) {
    return CLEANUP + " ".repeat(bytes - CLEANUP.length());
  }

  /** A {@code GET} without a body. */
  static String get(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  }

  SimConnection send(String text) throws IOException {
    socket.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
    socket.getOutputStream().flush();
    return this;
  }

  SimConnection sendBytes(byte[] bytes) throws IOException {
    socket.getOutputStream().write(bytes);
    socket.getOutputStream().flush();
    return this;
  }

  /** The next answer's status line and headers only (an answer to HEAD has no body). */
  Optional<Answer> nextHead() throws IOException {
    return next(false);
  }

  /**
   * The next answer on the connection (its body by Content-Length, which every answer of the sim
   * carries), or empty when the sim closed or reset the connection first.
   */
  Optional<Answer> next() throws IOException {
    return next(true);
  }

  private Optional<Answer> next(boolean withBody) throws IOException {
    String head;
    try {
      head = head();
    } catch (SocketException reset) {
      return Optional.empty();
    }
    if (head == null) {
      return Optional.empty();
    }
    String[] lines = head.split("\r\n");
    Map<String, String> headers = new TreeMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers.put(
          lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
          lines[i].substring(colon + 1).trim());
    }
    int length = withBody ? Integer.parseInt(headers.getOrDefault("content-length", "0")) : 0;
    byte[] body = in.readNBytes(length);
    return Optional.of(
        new Answer(
            Integer.parseInt(lines[0].split(" ")[1]),
            headers,
            new String(body, StandardCharsets.UTF_8)));
  }

  /** Whether the sim ends the connection (or resets it) before another byte of an answer. */
  boolean endsWithoutAnAnswer() throws IOException {
    try {
      return in.read() < 0;
    } catch (SocketException reset) {
      return true;
    }
  }

  /** The status line and headers, or null at the end of the stream before the first byte. */
  private String head() throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        if (head.size() == 0) {
          return null;
        }
        throw new IOException("the connection ended inside an answer's head: " + head);
      }
      head.write(b);
      matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
    }
    return head.toString(StandardCharsets.US_ASCII);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  /** One answer: its status, its headers by lower-case name, its body. */
  record Answer(int status, Map<String, String> headers, String body) {}
}

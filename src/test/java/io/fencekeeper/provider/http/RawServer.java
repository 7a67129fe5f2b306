package io.fencekeeper.provider.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A misbehaving provider for the client's tests: a plain socket server that reads each request's
 * head and body and then does whatever {@code behaviour} does with the connection (answer a huge
 * body, never answer, ...). One thread per connection; closing it closes every socket.
 */
final class RawServer implements AutoCloseable {

  /** What the server does once it has read a request. */
  @FunctionalInterface
  interface Behaviour {
    void onRequest(String head, OutputStream out) throws IOException;
  }

  private final ServerSocket socket;
  private final Behaviour behaviour;
  private final List<Socket> connections = new CopyOnWriteArrayList<>();
  final AtomicInteger requests = new AtomicInteger();

  /** The body of every request read, in order. */
  final List<String> bodies = new CopyOnWriteArrayList<>();

  RawServer(Behaviour behaviour) throws IOException {
    this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.behaviour = behaviour;
    Thread acceptor = new Thread(this::accept, "raw-server-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  URI baseUrl() {
    return URI.create("http://127.0.0.1:" + socket.getLocalPort());
  }

  private void accept() {
    while (!socket.isClosed()) {
      try {
        Socket connection = socket.accept();
        connections.add(connection);
        Thread serve = new Thread(() -> serve(connection), "raw-server-connection");
        serve.setDaemon(true);
        serve.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket connection) {
    try (connection) {
      InputStream in = connection.getInputStream();
      while (true) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        bodies.add(new String(in.readNBytes(contentLength(head)), StandardCharsets.UTF_8));
        requests.incrementAndGet();
        behaviour.onRequest(head, connection.getOutputStream());
      }
    } catch (IOException e) {
      // the client hung up
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    byte[] end = {'\r', '\n', '\r', '\n'};
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }

  private static int contentLength(String head) {
    for (String line : head.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("Content-Length")) {
        return Integer.parseInt(line.substring(colon + 1).trim());
      }
    }
    return 0;
  }

  /** Writes a status line and headers (CRLF-separated, without the blank line's CRLF). */
  static void head(OutputStream out, String statusLine, String... headers) throws IOException {
    StringBuilder text = new StringBuilder("HTTP/1.1 ").append(statusLine).append("\r\n");
    for (String header : headers) {
      text.append(header).append("\r\n");
    }
    text.append("\r\n");
    out.write(text.toString().getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (Socket connection : connections) {
      try {
        connection.close();
      } catch (IOException e) {
        // already gone
      }
    }
  }
}

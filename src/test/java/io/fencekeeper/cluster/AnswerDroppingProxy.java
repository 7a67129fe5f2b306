package io.fencekeeper.cluster;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small HTTP/1.1 proxy in front of a node, one request per connection: it passes every request on
 * and every answer back, but drops the answer of a share of the claims (claim-next, claim): the
 * node granted the lease (only granted claims are dropped), the worker's connection closes without
 * a byte. What a load balancer's reset or a network cut after the send does to a worker. It names
 * the request ids of the claims whose answers it dropped.
 */
final class AnswerDroppingProxy implements AutoCloseable {

  private static final Pattern REQUEST_ID = Pattern.compile("\"requestId\"\\s*:\\s*\"([^\"]+)\"");

  private final ServerSocket server;
  private final int nodePort;
  private final double dropShare;
  private final Random random;
  private final List<String> dropped = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  AnswerDroppingProxy(int nodePort, double dropShare, long seed) throws IOException {
    this.server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
    this.nodePort = nodePort;
    this.dropShare = dropShare;
    this.random = new Random(seed);
    this.acceptor = new Thread(this::accept, "answer-dropping-proxy");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** The request ids of the claims whose answers were dropped, in order. */
  List<String> dropped() {
    return List.copyOf(dropped);
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Thread exchange = new Thread(() -> exchange(client), "answer-dropping-proxy-exchange");
        exchange.setDaemon(true);
        exchange.start();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void exchange(Socket client) {
    try (client;
        Socket node = new Socket(InetAddress.getLoopbackAddress(), nodePort)) {
      client.setSoTimeout(60_000);
      node.setSoTimeout(60_000);
      InputStream in = client.getInputStream();
      String head = readHead(in);
      if (head == null) {
        return;
      }
      byte[] body = in.readNBytes(contentLength(head));
      String requestLine = head.substring(0, head.indexOf("\r\n"));
      OutputStream toNode = node.getOutputStream();
      toNode.write(withConnectionClose(head).getBytes(StandardCharsets.ISO_8859_1));
      toNode.write(body);
      toNode.flush();
      byte[] answer = node.getInputStream().readAllBytes(); // the node closes after its answer
      boolean claim = requestLine.contains("/claim-next ") || requestLine.contains("/claim ");
      boolean granted =
          new String(answer, 0, Math.min(answer.length, 16), StandardCharsets.ISO_8859_1)
              .startsWith("HTTP/1.1 200");
      if (claim && granted && drop()) {
        Matcher id = REQUEST_ID.matcher(new String(body, StandardCharsets.UTF_8));
        dropped.add(id.find() ? id.group(1) : "(none)");
        return; // granted at the node, never heard of by the worker
      }
      String answerText = new String(answer, StandardCharsets.ISO_8859_1);
      int end = answerText.indexOf("\r\n\r\n");
      OutputStream toClient = client.getOutputStream();
      if (end < 0) {
        toClient.write(answer);
      } else {
        toClient.write(
            withConnectionClose(answerText.substring(0, end + 4))
                .getBytes(StandardCharsets.ISO_8859_1));
        toClient.write(answer, end + 4, answer.length - end - 4);
      }
      toClient.flush();
    } catch (IOException e) {
      // one exchange failed: the worker sees a transport error, as it would without the proxy
    }
  }

  private synchronized boolean drop() {
    return random.nextDouble() < dropShare;
  }

  /** The head up to and with its empty line, or null at the end of the stream. */
  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    int b;
    while ((b = in.read()) != -1) {
      head.write(b);
      matched = (b == '\r' || b == '\n') ? matched + 1 : 0;
      if (matched == 4) {
        return head.toString(StandardCharsets.ISO_8859_1);
      }
    }
    return null;
  }

  private static int contentLength(String head) {
    Matcher m = Pattern.compile("(?im)^content-length:\\s*(\\d+)").matcher(head);
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }

  /** The head with its Connection header replaced: one exchange per connection. */
  private static String withConnectionClose(String head) {
    String without = head.replaceAll("(?im)^connection:[^\r\n]*\r\n", "");
    return without.substring(0, without.length() - 2) + "Connection: close\r\n\r\n";
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}

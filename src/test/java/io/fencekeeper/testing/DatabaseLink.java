package io.fencekeeper.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The road between some nodes and their database, which a test can cut: a TCP forwarder on
 * loopback. Cut, every open connection is reset and every new one is reset as soon as it is made,
 * as a database that crashed or a network that lost it looks to a node; mended, connections are
 * forwarded again. The test itself reads the database directly, past the cut.
 */
public final class DatabaseLink implements AutoCloseable {

  private static final Pattern HOST_PORT = Pattern.compile("//([^/:?]+):(\\d+)/");

  private final ServerSocket server;
  private final InetSocketAddress database;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;
  private final AtomicInteger refused = new AtomicInteger();

  /** A link to the database of {@code jdbcUrl} (a PostgreSQL URL with host and port). */
  public DatabaseLink(String jdbcUrl) throws IOException {
    Matcher m = HOST_PORT.matcher(jdbcUrl);
    if (!m.find()) {
      throw new IllegalArgumentException("no host:port in the database URL");
    }
    database = new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2)));
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "database-link");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** {@code jdbcUrl} with its host and port replaced by this link's. */
  public String url(String jdbcUrl) {
    return HOST_PORT.matcher(jdbcUrl).replaceFirst("//127.0.0.1:" + server.getLocalPort() + "/");
  }

  /** The database goes away for the nodes behind this link: every connection is reset. */
  public void cut() {
    cut = true;
    open.forEach(DatabaseLink::reset);
  }

  /** The database is back: new connections reach it. */
  public void mend() {
    cut = false;
  }

  /** Connections tried and reset while the link was cut: how often the nodes knocked. */
  public int refused() {
    return refused.get();
  }

  /** Connections forwarded now, both ends counted (for the test's printout). */
  public int openSockets() {
    return open.size();
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException closed) {
        return;
      }
      if (cut) {
        refused.incrementAndGet();
        reset(client);
        continue;
      }
      try {
        Socket upstream = new Socket();
        upstream.connect(database, 5_000);
        open.add(client);
        open.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException unreachable) {
        reset(client);
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread pump =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException endedOrCut) {
                // one side closed or was reset: the other goes too, below
              } finally {
                open.remove(from);
                open.remove(to);
                reset(from);
                reset(to);
              }
            },
            "database-link-pump");
    pump.setDaemon(true);
    pump.start();
  }

  /** Closes with SO_LINGER 0: the peer gets a reset, as from a database that went away. */
  private static void reset(Socket socket) {
    try {
      socket.setSoLinger(true, 0);
    } catch (IOException alreadyClosed) {
      // closing below is all that is left
    }
    try {
      socket.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    open.forEach(DatabaseLink::reset);
  }

  @Override
  public String toString() {
    return URI.create("tcp://127.0.0.1:" + server.getLocalPort()) + (cut ? " (cut)" : "");
  }
}

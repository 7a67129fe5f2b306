package io.fencekeeper.node;

import com.typesafe.config.Config;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;

/**
 * The cluster port carries every command between nodes, unauthenticated unless Artery's TLS
 * transport is on. A node whose remoting would listen beyond this machine in plain TCP refuses to
 * start, unless the operator says the network is private ({@code
 * FENCEKEEPER_CLUSTER_INSECURE=true}, docs/cluster.md "Securing the cluster port").
 */
final class RemotingExposure {

  private RemotingExposure() {}

  static void check(Config config) {
    String transport = config.getString("pekko.remote.artery.transport");
    if (transport.equalsIgnoreCase("tls-tcp")
        || config.getBoolean("fencekeeper.cluster-insecure")) {
      return;
    }
    String canonical = config.getString("pekko.remote.artery.canonical.hostname");
    String bind = config.getString("pekko.remote.artery.bind.hostname");
    for (String host : new String[] {canonical, bind}) {
      if (!host.isBlank() && !isLoopback(host)) {
        throw new IllegalArgumentException(
            "cluster remoting would listen on "
                + host
                + " in plain TCP: configure Artery TLS (pekko.remote.artery.transport = tls-tcp) or,"
                + " on a private network only, set FENCEKEEPER_CLUSTER_INSECURE=true"
                + " (docs/cluster.md, \"Securing the cluster port\")");
      }
    }
  }

  private static boolean isLoopback(String host) {
    String h = host.trim().toLowerCase(Locale.ROOT);
    if (h.equals("localhost")) {
      return true;
    }
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    if (!h.matches("[0-9.]+") && !h.contains(":")) {
      return false; // a name could resolve to anything: treat it as exposed
    }
    try {
      return InetAddress.getByName(h).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}

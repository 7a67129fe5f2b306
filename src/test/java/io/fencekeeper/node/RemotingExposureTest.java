package io.fencekeeper.node;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The cluster port carries every command between nodes: a node refuses to listen on it beyond this
 * machine in plain TCP unless the operator says the network is private (issue 12, finding 10).
 */
class RemotingExposureTest {

  static Config config(Map<String, Object> overrides) {
    return NodeConfig.load(Optional.empty(), overrides);
  }

  @Test
  void plainTcpBeyondLoopbackIsRefusedNamingTheWayOut() {
    for (String host : new String[] {"10.0.0.5", "node1", "0.0.0.0"}) {
      IllegalArgumentException refused =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  RemotingExposure.check(
                      config(Map.of("pekko.remote.artery.canonical.hostname", host))),
              host);
      assertTrue(refused.getMessage().contains("FENCEKEEPER_CLUSTER_INSECURE"), host);
      assertTrue(refused.getMessage().contains("tls-tcp"), host);
    }
    assertThrows(
        IllegalArgumentException.class,
        () ->
            RemotingExposure.check(config(Map.of("pekko.remote.artery.bind.hostname", "0.0.0.0"))));
  }

  @Test
  void loopbackTlsOrAnExplicitlyPrivateNetworkStart() {
    assertDoesNotThrow(() -> RemotingExposure.check(config(Map.of())));
    assertDoesNotThrow(
        () ->
            RemotingExposure.check(
                config(
                    Map.of(
                        "pekko.remote.artery.canonical.hostname",
                        "node1",
                        "fencekeeper.cluster-insecure",
                        true))));
    assertDoesNotThrow(
        () ->
            RemotingExposure.check(
                config(
                    Map.of(
                        "pekko.remote.artery.canonical.hostname", "node1",
                        "pekko.remote.artery.transport", "tls-tcp"))));
  }
}

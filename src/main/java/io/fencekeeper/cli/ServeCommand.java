package io.fencekeeper.cli;

import com.typesafe.config.Config;
import io.fencekeeper.api.HttpApi;
import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.api.metrics.MeteredItemGateway;
import io.fencekeeper.api.ops.ManagementStarter;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.node.NodeSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.http.javadsl.ServerBinding;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A long-running node with its HTTP API and Pekko Management; SIGTERM runs Pekko's coordinated
 * shutdown through the JVM hook.
 */
@Command(name = "serve", description = "Start a long-running node from a config file.")
public final class ServeCommand implements Callable<Integer> {

  private static final Duration UNBOUNDED = Duration.ofMillis(Long.MAX_VALUE);

  @Option(
      names = {"-c", "--config"},
      description = "HOCON file (default: the bundled conf/fencekeeper.conf)")
  Path config;

  @Override
  public Integer call() throws Exception {
    Config resolved = NodeConfig.load(Optional.ofNullable(config), Map.of());
    // a configuration that would expose the node (API without a token, plain-TCP remoting beyond
    // loopback) or cannot work is refused before anything is bound
    ApiSettings api;
    ApiMetrics metrics = new ApiMetrics();
    FencekeeperNode node;
    try {
      api = ApiSettings.from(NodeSettings.from(resolved));
      node =
          FencekeeperNode.builder(resolved)
              .workerGateway(items -> new MeteredItemGateway(items, metrics, "worker"))
              .attemptListener(metrics)
              .start();
    } catch (IllegalArgumentException e) {
      System.err.println("fencekeeper node not started: " + e.getMessage());
      return 78;
    }
    // before anything can down the node: its shutdown must find the exit's task in place
    NodeExit exit = NodeExit.watch(node.system());
    // management first: Cluster Bootstrap's contact points are other nodes' management ports, and
    // /health/ready answers 503 until this node is an Up member
    boolean bootstrap = node.settings().clusterBootstrap();
    var management =
        ManagementStarter.start(node.system(), bootstrap)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    // with bootstrap a first start waits for required-contact-point-nr nodes, however long that is
    node.awaitUp(bootstrap ? UNBOUNDED : Duration.ofSeconds(60));
    ServerBinding http =
        HttpApi.start(node, api, metrics).toCompletableFuture().get(30, TimeUnit.SECONDS);
    System.err.println(
        "fencekeeper node up: "
            + node.system().address()
            + ", journal "
            + node.database().kind()
            + ", HTTP API "
            + http.localAddress()
            + ", management "
            + management);
    return exit.await();
  }
}

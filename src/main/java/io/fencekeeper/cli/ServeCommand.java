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
import io.fencekeeper.node.NodeWarmUp;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
    int warmUpItems;
    NodeSettings settings;
    try {
      settings = NodeSettings.from(resolved);
      api = ApiSettings.from(settings);
      warmUpItems = NodeWarmUp.items(resolved);
    } catch (IllegalArgumentException e) {
      System.err.println("fencekeeper node not started: " + e.getMessage());
      return 78;
    }
    // before the node joins anyone: a node that is up takes shards, and its first items would run
    // in the interpreter
    if (warmUp(resolved, warmUpItems) instanceof NodeWarmUp.Outcome.Stopped
        || NodeWarmUp.jvmShuttingDown()) {
      System.err.println("fencekeeper node not started: stopped during its warm-up");
      return 0;
    }
    try {
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
    try {
      node.awaitUp(bootstrap ? UNBOUNDED : settings.joinTimeout());
    } catch (TimeoutException e) {
      // not a fault of this node's settings: a supervisor's restart tries again (exit 75, as a
      // downed node), and the operator reads why in one line instead of a stack trace
      System.err.println(
          "fencekeeper node not started: not an Up cluster member "
              + settings.joinTimeout().toSeconds()
              + " s after joining seed nodes "
              + String.join(",", settings.seedNodes())
              + " (none answered, or a partition cuts this node off): exiting 75");
      node.close();
      return 75;
    }
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

  /** The warm-up, decorated like the node below with metrics of its own, and one line about it. */
  private static NodeWarmUp.Outcome warmUp(Config resolved, int synthetic) {
    if (synthetic > 0) {
      System.err.printf(
          "fencekeeper warm-up: %d synthetic items on a throwaway in-memory node before this node"
              + " starts%n",
          synthetic);
    }
    ApiMetrics throwaway = new ApiMetrics();
    NodeWarmUp.Outcome outcome =
        NodeWarmUp.run(
            resolved,
            synthetic,
            b ->
                b.workerGateway(items -> new MeteredItemGateway(items, throwaway, "worker"))
                    .attemptListener(throwaway));
    if (outcome instanceof NodeWarmUp.Outcome.Warmed w) {
      System.err.printf(
          "fencekeeper warm-up: %d of %d items %s in %.1f s on a throwaway in-memory node"
              + " (FENCEKEEPER_WARM_UP_ITEMS=0 skips it)%n",
          w.done(), w.items(), w.state(), w.took().toMillis() / 1000.0);
    } else if (outcome instanceof NodeWarmUp.Outcome.Failed f) {
      System.err.printf(
          "fencekeeper warm-up failed after %.1f s (%s): the node starts cold%n",
          f.took().toMillis() / 1000.0, f.reason());
    }
    return outcome;
  }
}

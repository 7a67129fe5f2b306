package io.fencekeeper.cli;

import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.management.javadsl.PekkoManagement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** A long-running node; SIGTERM runs Pekko's coordinated shutdown through the JVM hook. */
@Command(name = "serve", description = "Start a long-running node from a config file.")
public final class ServeCommand implements Callable<Integer> {

  @Option(
      names = {"-c", "--config"},
      description = "HOCON file (default: the bundled conf/fencekeeper.conf)")
  Path config;

  @Override
  public Integer call() throws Exception {
    FencekeeperNode node =
        FencekeeperNode.start(NodeConfig.load(Optional.ofNullable(config), Map.of()));
    // read-only management (route-providers-read-only): /health/ready, /cluster/members
    PekkoManagement.get(node.system()).start().toCompletableFuture().get(30, TimeUnit.SECONDS);
    node.awaitUp(Duration.ofSeconds(60));
    System.err.println(
        "fencekeeper node up: " + node.system().address() + " journal " + node.database().kind());
    node.system().getWhenTerminated().toCompletableFuture().join();
    return 0;
  }
}

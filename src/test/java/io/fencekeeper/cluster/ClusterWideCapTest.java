package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.startNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The governor's cap is cluster-wide: three nodes with eight workers each, a cap of five, and the
 * provider never sees more than five calls at once (the provider sees the fleet, not a node).
 */
class ClusterWideCapTest {

  static final int CAP = 5;

  /** Counts the provider calls in flight across every node that shares it. */
  static final class InFlightMeter implements Provider {
    final Provider delegate;
    final AtomicInteger now = new AtomicInteger();
    final AtomicInteger max = new AtomicInteger();

    InFlightMeter(Provider delegate) {
      this.delegate = delegate;
    }

    <T> CompletionStage<T> metered(Supplier<CompletionStage<T>> call) {
      max.accumulateAndGet(now.incrementAndGet(), Math::max);
      return call.get().whenComplete((value, failure) -> now.decrementAndGet());
    }

    @Override
    public CompletionStage<Plan> plan(ItemId item) {
      return metered(() -> delegate.plan(item));
    }

    @Override
    public CompletionStage<Receipt> apply(Cleanup cleanup) {
      return metered(() -> delegate.apply(cleanup));
    }

    @Override
    public CompletionStage<Optional<Receipt>> lookup(ItemId item, String key) {
      return metered(() -> delegate.lookup(item, key));
    }

    @Override
    public void close() {
      delegate.close();
    }
  }

  @Test
  void inFlightProviderCallsAcrossThreeNodesNeverExceedTheCap() throws Exception {
    SimProviderServer sim = SimProviderServer.start(0, SimFaults.NONE.withLatency(40, 20), 3);
    InFlightMeter meter =
        new InFlightMeter(
            HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(5)));
    TestDatabases.Target db = TestDatabases.freshPostgres();
    Path dir = Files.createTempDirectory("fencekeeper-cap");
    Map<String, Object> caps =
        Map.of(
            "fencekeeper.governor.normal-cap", CAP,
            "fencekeeper.governor.burst-cap", CAP,
            "fencekeeper.governor.min-cap", 1);
    List<FencekeeperNode> nodes = new ArrayList<>();
    try {
      FencekeeperNode first = startNode(db, dir.resolve("n1"), List.of(), meter, 8, caps);
      nodes.add(first);
      List<String> seeds = List.of(first.system().address().toString());
      nodes.add(startNode(db, dir.resolve("n2"), seeds, meter, 8, caps));
      nodes.add(startNode(db, dir.resolve("n3"), seeds, meter, 8, caps));
      List<AccountCursor> accounts = accounts(200);
      RunView run = createRun(first, "capped", accounts);
      RunView ended = awaitEnded(first, run.runId(), Duration.ofMinutes(3));
      System.out.printf(
          "cluster-wide cap %d: at most %d provider calls in flight across 3 nodes x 8 workers%n",
          CAP, meter.max.get());
      assertEquals(RunState.SUCCEEDED, ended.state());
      assertTrue(meter.max.get() <= CAP, "in flight " + meter.max.get() + " > cap " + CAP);
      assertTrue(meter.max.get() >= 2, "the cap was used, not bypassed: " + meter.max.get());
    } finally {
      for (FencekeeperNode node : nodes) {
        node.system().terminate();
      }
      for (FencekeeperNode node : nodes) {
        node.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      meter.close();
      sim.close();
    }
  }
}

package io.fencekeeper.api;

import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.KeepApart;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.testing.ForwardingItemGateway;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A node as an operator sees it at night: real clock, eight workers, the simulated provider over
 * HTTP with some latency, the HTTP API with the dashboard and a token. Runs of a held job are not
 * touched by the workers until the test releases them, so the test can drive those items through
 * the lease API itself (a stale token) or cancel a run that is still RUNNING.
 */
final class DashboardTestNode implements AutoCloseable {

  static final String TOKEN = "dashboard-admin-token-0123456789";

  /** The read-only token of FENCEKEEPER_API_READ_TOKEN. */
  static final String READ_TOKEN = "dashboard-read-token-0123456789";

  static final int WORKERS = 8;
  static final double THROTTLE_PER_SECOND = 40;

  final SimProviderServer sim;
  final HttpProvider provider;
  final FencekeeperNode node;
  final String base;
  final HeldClaims held;

  DashboardTestNode() throws Exception {
    this(Map.of());
  }

  /** With {@code config} overrides on top of the node's own (the fleet's bounds, say). */
  DashboardTestNode(Map<String, Object> config) throws Exception {
    // the provider throttles above 40 calls a second: the governor has decisions to show
    sim =
        SimProviderServer.start(
            0, SimFaults.NONE.withLatency(15, 10).withThrottlePerSecond(THROTTLE_PER_SECOND), 7);
    provider = HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(5));
    Path dir = Files.createTempDirectory("fk-dashboard");
    Map<String, Object> overrides = TestNodes.overrides(TestDatabases.h2File(dir), dir);
    overrides.put("fencekeeper.governor.normal-cap", 6);
    overrides.put("fencekeeper.governor.burst-cap", 12);
    overrides.put("fencekeeper.http.api-read-token", READ_TOKEN);
    // a loaded machine can take longer than the 5 s default to stage the 600 accounts of a run;
    // the tests expect 201, so the create may wait up to 15 s (below the 20 s request timeout)
    overrides.put("fencekeeper.create-wait", "15s");
    overrides.putAll(config);
    HeldClaims[] gate = new HeldClaims[1];
    node =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .provider(provider)
            .workers(WORKERS)
            .workerGateway(items -> gate[0] = new HeldClaims(items))
            .start()
            .awaitUp(Duration.ofSeconds(60));
    held = gate[0];
    ApiSettings settings = ApiSettings.from(node.settings()).withPort(0).withToken(TOKEN);
    var binding = HttpApi.start(node, settings).toCompletableFuture().get(30, TimeUnit.SECONDS);
    base = "http://127.0.0.1:" + binding.localAddress().getPort();
  }

  /**
   * The provider stops throttling: the governor climbs back towards its normal cap and the rest of
   * a run goes as fast as this machine allows.
   */
  void liftThrottle() {
    sim.setFaults(sim.faults().withThrottlePerSecond(0));
  }

  @Override
  public void close() {
    held.releaseAll();
    node.close();
    provider.close();
    sim.close();
  }

  /**
   * The workers' gateway: a claim of an item of a held job waits until the test releases the job;
   * every other command goes straight through.
   */
  static final class HeldClaims extends ForwardingItemGateway {
    private final ItemGateway items;
    private final Map<String, CompletableFuture<Void>> jobs = new ConcurrentHashMap<>();

    HeldClaims(ItemGateway items) {
      super(items);
      this.items = items;
    }

    void hold(String job) {
      jobs.putIfAbsent(job, new CompletableFuture<>());
    }

    void release(String job) {
      jobs.computeIfAbsent(job, j -> new CompletableFuture<>()).complete(null);
    }

    void releaseAll() {
      jobs.values().forEach(gate -> gate.complete(null));
    }

    @Override
    public CompletionStage<WorkItem.Reply> claim(
        ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keepApart) {
      CompletableFuture<Void> gate = jobs.get(item.job());
      return gate == null
          ? items.claim(item, workerId, lease, maxAttempts, keepApart)
          : gate.thenCompose(open -> items.claim(item, workerId, lease, maxAttempts, keepApart));
    }
  }
}

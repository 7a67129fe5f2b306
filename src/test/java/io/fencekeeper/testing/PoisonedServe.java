package io.fencekeeper.testing;

import com.typesafe.config.Config;
import io.fencekeeper.api.HttpApi;
import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.api.metrics.MeteredItemGateway;
import io.fencekeeper.api.ops.ManagementStarter;
import io.fencekeeper.cli.NodeExit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.node.NodeSettings;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.factory.ProviderFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * {@code serve} with a poison account: a node started exactly like {@code cli/ServeCommand} (the
 * configured provider, the HTTP API, management), whose provider adapter kills the JVM on the
 * poison account's {@code plan} or {@code apply} ({@code Runtime.halt(137)}: no shutdown hook, no
 * leave, no flush), as an adapter that runs out of memory or crashes natively on one huge account;
 * with {@code --poison-after-ms N}, N ms after the poison's plan began (the adapter works on it a
 * moment first).
 *
 * <p>{@code PoisonedServe --poison-account ACCOUNT [--poison-after-ms N] --config FILE}
 */
public final class PoisonedServe {

  /** The exit status of a node that its poison item killed. */
  public static final int KILLED = 137;

  private PoisonedServe() {}

  public static void main(String[] args) throws Exception {
    String poisonAccount = argument(args, "--poison-account");
    Path config = Path.of(argument(args, "--config"));
    Config resolved = NodeConfig.load(Optional.of(config), Map.of());
    ApiSettings api = ApiSettings.from(NodeSettings.from(resolved));
    ApiMetrics metrics = new ApiMetrics();
    Provider provider =
        new Poisoned(
            ProviderFactory.create(NodeSettings.from(resolved).provider()),
            poisonAccount,
            Duration.ofMillis(Long.parseLong(optional(args, "--poison-after-ms", "0"))));
    FencekeeperNode node =
        FencekeeperNode.builder(resolved)
            .provider(provider)
            .workerGateway(items -> new MeteredItemGateway(items, metrics, "worker"))
            .attemptListener(metrics)
            .start();
    NodeExit exit = NodeExit.watch(node.system());
    node.awaitUp(Duration.ofSeconds(60));
    var http = HttpApi.start(node, api, metrics).toCompletableFuture().get(30, TimeUnit.SECONDS);
    var management =
        ManagementStarter.start(node.system(), false)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    System.err.println(
        "fencekeeper node up (poison account "
            + poisonAccount
            + "): "
            + node.system().address()
            + ", HTTP API "
            + http.localAddress()
            + ", management "
            + management);
    System.exit(exit.await());
  }

  private static String optional(String[] args, String name, String otherwise) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return otherwise;
  }

  private static String argument(String[] args, String name) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    throw new IllegalArgumentException("missing " + name + " VALUE");
  }

  /** The configured provider, except that the poison account kills the process. */
  static final class Poisoned implements Provider {
    private final Provider delegate;
    private final String poisonAccount;

    private final Duration haltAfter;

    Poisoned(Provider delegate, String poisonAccount, Duration haltAfter) {
      this.delegate = delegate;
      this.poisonAccount = poisonAccount;
      this.haltAfter = haltAfter;
    }

    private void haltOn(ItemId item) {
      if (item.accountId().equals(poisonAccount)) {
        System.err.println("poison account " + poisonAccount + ": halting this node");
        Runtime.getRuntime().halt(KILLED);
      }
    }

    @Override
    public CompletionStage<Plan> plan(ItemId item) {
      if (item.accountId().equals(poisonAccount) && haltAfter.toMillis() > 0) {
        // the adapter works on the account a moment before it takes the JVM down, as one that
        // runs out of memory does; the node's other workers go on meanwhile
        return CompletableFuture.supplyAsync(
            () -> {
              haltOn(item);
              return null;
            },
            CompletableFuture.delayedExecutor(haltAfter.toMillis(), TimeUnit.MILLISECONDS));
      }
      haltOn(item);
      return delegate.plan(item);
    }

    @Override
    public CompletionStage<Receipt> apply(Cleanup cleanup) {
      haltOn(cleanup.item());
      return delegate.apply(cleanup);
    }

    @Override
    public CompletionStage<Optional<Receipt>> lookup(ItemId item, String key) {
      return delegate.lookup(item, key);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}

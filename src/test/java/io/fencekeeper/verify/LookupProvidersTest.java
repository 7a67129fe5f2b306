package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.factory.ProviderCatalog;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.http.StandaloneSystem;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystem;
import org.junit.jupiter.api.Test;

/**
 * Where a node's verifications look keys up: its workers' provider of the name; on a node without
 * workers, one built at the first lookup (here an http provider to a real sim) and closed with the
 * node; nothing for a name the node does not know.
 */
class LookupProvidersTest {

  static final ItemId ITEM = ItemId.of("job", LocalDate.parse("2026-11-29"), "a-1", "c-1");

  @Test
  void theWorkersProviderIsUsedAndAMissingOneIsBuiltOnceThenClosed() throws Exception {
    SimProviderServer sim = SimProviderServer.start(0, SimFaults.NONE, 1);
    ActorSystem system = StandaloneSystem.start("lookup-providers-test", 2);
    HttpProvider workers =
        HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(5));
    try {
      ProviderCatalog catalog =
          ProviderCatalog.fromConfig(
              FencekeeperNode.config(
                  Map.of(
                      "fencekeeper.providers.payments.kind",
                      "http",
                      "fencekeeper.providers.payments.url",
                      sim.baseUrl().toString())));
      LookupProviders providers =
          new LookupProviders(system, catalog, Map.of("default", workers), 4);

      Provider built = providers.apply("payments").orElseThrow();
      sim.writeForeignEffect(ITEM.idempotencyKey());

      assertSame(workers, providers.apply("default").orElseThrow(), "the workers' own");
      assertSame(built, providers.apply("payments").orElseThrow(), "built once");
      assertTrue(
          built
              .lookup(ITEM, ITEM.idempotencyKey())
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS)
              .isPresent(),
          "it looks up at the configured provider");
      assertEquals(Optional.empty(), providers.apply("nobody"));
      providers.close();
      assertTrue(
          built
              .lookup(ITEM, ITEM.idempotencyKey())
              .toCompletableFuture()
              .handle((found, failure) -> failure != null)
              .get(10, TimeUnit.SECONDS),
          "closed with the node");
    } finally {
      workers.close();
      StandaloneSystem.terminate(system);
      sim.close();
    }
  }
}

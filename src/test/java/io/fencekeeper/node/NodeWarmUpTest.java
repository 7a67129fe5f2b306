package io.fencekeeper.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fencekeeper.provider.factory.ProviderCatalog;
import io.fencekeeper.run.schedule.NightlySchedule;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The throwaway node a warm-up runs must not be able to touch the node's own world: its journal,
 * its providers, its cluster, its schedules. Its configuration is checked here; {@code
 * WarmUpProcessTest} checks a real {@code serve} process's journal and provider afterwards.
 */
class NodeWarmUpTest {

  /** A production-like node: PostgreSQL, an http provider, a named one, seeds, a schedule. */
  private static Config productionLike() {
    return NodeConfig.load(
            Optional.empty(),
            Map.of(
                "fencekeeper.db.url", "jdbc:postgresql://db.example:5432/fencekeeper",
                "fencekeeper.db.user", "fencekeeper",
                "fencekeeper.db.password", "secret",
                "fencekeeper.provider.kind", "http",
                "fencekeeper.provider.url", "https://payments.example/",
                "fencekeeper.provider.max-in-flight", 16,
                "fencekeeper.seed-nodes", "pekko://fencekeeper@10.0.0.1:25520",
                "fencekeeper.verify.when-run-ends", true,
                "fencekeeper.workers", 48,
                "pekko.remote.artery.canonical.hostname", "10.0.0.7"))
        .withFallback(
            ConfigFactory.parseString(
                "fencekeeper.providers.ledger { kind = http, url = \"https://ledger.example/\" }\n"
                    + "fencekeeper.schedules = [{ job = nightly, start = \"02:00\", deadline ="
                    + " \"06:00\", zone = UTC, scope { type = csv, path = accounts.csv }, max-attempts = 5,"
                    + " max-failed-items = 10 }]"))
        .resolve();
  }

  @Test
  void theThrowawayHasAnInMemoryJournalTheSimAndACLusterOfItsOwnAndKeepsTheWorkers() {
    Config node = productionLike();
    assertEquals(2, ProviderCatalog.fromConfig(node).entries().size(), "default and ledger");
    assertEquals(1, NightlySchedule.fromConfig(node).size());

    Config warm = NodeWarmUp.throwawayConfig(node, "fk-test");
    NodeSettings settings = NodeSettings.from(warm);

    assertEquals("jdbc:h2:mem:fk-test;DB_CLOSE_DELAY=-1", settings.dbUrl());
    assertEquals("sim", warm.getString("fencekeeper.provider.kind"));
    assertEquals("", warm.getString("fencekeeper.provider.url"));
    assertEquals(
        List.of("default"),
        List.copyOf(ProviderCatalog.fromConfig(warm).entries().keySet()),
        "no named provider: nothing can call the ledger");
    assertTrue(NightlySchedule.fromConfig(warm).isEmpty(), "no schedule fires in the throwaway");
    assertTrue(settings.seedNodes().isEmpty(), "joins nobody");
    assertFalse(settings.clusterBootstrap());
    assertEquals("127.0.0.1", warm.getString("pekko.remote.artery.canonical.hostname"));
    assertEquals(0, warm.getInt("pekko.remote.artery.canonical.port"), "a free port");
    assertFalse(warm.getBoolean("fencekeeper.verify.when-run-ends"));
    assertFalse(warm.getBoolean("pekko.coordinated-shutdown.exit-jvm"));
    // what it is there to warm stays the node's
    assertEquals(48, settings.workers());
    assertEquals(
        node.getInt("pekko.cluster.sharding.number-of-shards"),
        warm.getInt("pekko.cluster.sharding.number-of-shards"));
    assertEquals(node.getDuration("fencekeeper.lease"), warm.getDuration("fencekeeper.lease"));
  }

  @Test
  void theItemsSettingIsBoundedAndNamedWhenWrong() {
    assertEquals(
        0, NodeWarmUp.items(NodeConfig.load(Optional.empty(), Map.of())), "off by default");
    assertEquals(
        6000,
        NodeWarmUp.items(NodeConfig.load(Optional.empty(), Map.of(NodeWarmUp.ITEMS_PATH, 6000))));
    for (Object bad : List.of(-1, 1_000_001, "many", Long.MAX_VALUE)) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  NodeWarmUp.items(
                      NodeConfig.load(Optional.empty(), Map.of(NodeWarmUp.ITEMS_PATH, bad))),
              String.valueOf(bad));
      assertTrue(
          e.getMessage()
              .startsWith(
                  "fencekeeper.warm-up.items (FENCEKEEPER_WARM_UP_ITEMS) must be between 0 and"
                      + " 1000000, got '"
                      + bad
                      + "'"),
          e.getMessage());
    }
  }

  @Test
  void theSyntheticScopeIsAnUploadOfDistinctAccounts() {
    String csv = new String(NodeWarmUp.accounts(3), StandardCharsets.US_ASCII);
    assertEquals("accountId,cursor\nwarm-up-0,c-0\nwarm-up-1,c-1\nwarm-up-2,c-2\n", csv);
  }
}

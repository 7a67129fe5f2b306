package io.fencekeeper.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the composition root decides as it starts and stops a node. */
class FencekeeperNodeTest {

  @TempDir Path dir;

  @Test
  void aWorkerWaitsForAnItemAThirdOfTheLeaseButNeverLessThanTwoNorMoreThanFifteenSeconds() {
    assertEquals(Duration.ofSeconds(10), FencekeeperNode.itemAskTimeout(Duration.ofSeconds(30)));
    assertEquals(Duration.ofSeconds(2), FencekeeperNode.itemAskTimeout(Duration.ofSeconds(3)));
    assertEquals(Duration.ofSeconds(15), FencekeeperNode.itemAskTimeout(Duration.ofMinutes(5)));
  }

  @Test
  void aRetentionThatCannotWriteItsArchiveIsRefusedBeforeTheJournalIsTouched() throws Exception {
    TestDatabases.Target db = TestDatabases.h2File(dir);
    Path notADirectory = Files.writeString(dir.resolve("archive"), "a file, not a directory");
    Map<String, Object> overrides = TestNodes.overrides(db, dir.resolve("data"));
    overrides.put("fencekeeper.retention.archive-dir", notADirectory.toString());

    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> FencekeeperNode.start(FencekeeperNode.config(overrides)));
    assertTrue(
        refused.getMessage().startsWith("fencekeeper.retention.archive-dir "),
        refused.getMessage());
    assertEquals(0, tables(db), "no migration ran: the database is as it was");
  }

  /** The tables of the database's own schema (a node's migrations create the journal's there). */
  private static int tables(TestDatabases.Target db) throws Exception {
    int count = 0;
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        ResultSet tables = c.getMetaData().getTables(null, "PUBLIC", "%", null)) {
      while (tables.next()) {
        count++;
      }
    }
    return count;
  }

  @Test
  void aNodeToldNotToHostShardsWorksWithoutTheItemsRoleAndLeavesTheCallersProviderOpen()
      throws Exception {
    TestDatabases.Target db = TestDatabases.h2File(dir);
    Map<String, Object> overrides = TestNodes.overrides(db, dir.resolve("data"));
    overrides.put("fencekeeper.item.host-shards", "off");
    CallersProvider provider = new CallersProvider();
    FencekeeperNode node =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .provider(provider)
            .workers(2)
            .start()
            .awaitUp(Duration.ofSeconds(30));
    try {
      assertFalse(
          Cluster.get(node.system()).selfMember().hasRole(WorkItem.HOST_ROLE),
          "host-shards = off: the node's workers reach items on other members");
      assertEquals(Optional.of(provider), node.provider(), "the caller's provider is the default");
    } finally {
      node.close();
    }
    assertFalse(provider.closed.get(), "the caller's provider stays the caller's to close");

    FencekeeperNode hosting =
        TestNodes.start(
            TestDatabases.h2File(dir), dir.resolve("data-2"), java.time.Clock.systemUTC());
    try {
      assertTrue(
          Cluster.get(hosting.system()).selfMember().hasRole(WorkItem.HOST_ROLE),
          "a node alone with workers hosts the item shards");
    } finally {
      hosting.close();
    }
  }

  /** A provider the test owns: it only notes whether anybody closed it. */
  private static final class CallersProvider implements Provider {
    final AtomicBoolean closed = new AtomicBoolean();

    @Override
    public CompletionStage<Plan> plan(ItemId item) {
      return CompletableFuture.failedFuture(new IllegalStateException("not called here"));
    }

    @Override
    public CompletionStage<Receipt> apply(Cleanup cleanup) {
      return CompletableFuture.failedFuture(new IllegalStateException("not called here"));
    }

    @Override
    public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
      return CompletableFuture.failedFuture(new IllegalStateException("not called here"));
    }

    @Override
    public void close() {
      closed.set(true);
    }
  }
}

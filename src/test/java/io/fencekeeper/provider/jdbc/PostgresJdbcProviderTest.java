package io.fencekeeper.provider.jdbc;

import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.localdb.PostgresBinaries;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.ProviderError;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The jdbc provider's contract on a real PostgreSQL server, started once for the class. */
class PostgresJdbcProviderTest extends JdbcProviderContract {

  private EmbeddedPostgres postgres;

  @Override
  String startDatabase() throws Exception {
    postgres = PostgresBinaries.builder().start();
    return postgres.getJdbcUrl("postgres", "postgres");
  }

  @Override
  String user() {
    return "postgres";
  }

  @Override
  String password() {
    return null;
  }

  @Override
  void stopDatabase() throws Exception {
    if (postgres != null) {
      postgres.close();
    }
  }

  /**
   * The deadline is checked again just before the commit, by the database's clock as it moves
   * ({@code clock_timestamp()}): an effect statement that outlasts the deadline is rolled back to
   * its savepoint, and only the raised fence commits.
   */
  @Test
  void anEffectThatOutlastsTheDeadlineIsRolledBackAndOnlyTheFenceCommits() throws SQLException {
    Duration sleep = Duration.ofSeconds(3);
    String slowEffect =
        "INSERT INTO cleanup_log (item_id, account_id, business_date, amount_minor)"
            + " SELECT :itemId, :accountId, :businessDate, :amountMinor FROM pg_sleep("
            + sleep.toSeconds()
            + ")";
    ItemId item = item("a-slow");
    try (JdbcProvider slow =
        JdbcProvider.start(
            JdbcProviderSettings.of(url, user(), password()).withEffectSql(slowEffect))) {
      // far enough for the first check (before the effect) to pass on a loaded machine
      Instant deadline = Instant.now().plusMillis(1500);
      long start = System.nanoTime();

      ProviderError refused =
          failure(slow.apply(new Cleanup(item, writeOff(100), item.idempotencyKey(), 6, deadline)));

      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertTrue(took.compareTo(sleep) >= 0, "the effect ran (" + took + "): the check after it");
      assertInstanceOf(ProviderError.Transient.class, refused);
      assertTrue(refused.message().contains("deadline_passed"), refused.message());
      assertEquals(0, effectsApplied(item));
      assertEquals(6, fenceToken(item), "the fence committed on its own");
      assertTrue(result(slow.lookup(item, item.idempotencyKey())).isEmpty());
    }
  }
}

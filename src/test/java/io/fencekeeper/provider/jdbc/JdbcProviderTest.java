package io.fencekeeper.provider.jdbc;

import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the jdbc provider decides beyond the contract every database keeps ({@link
 * JdbcProviderContract}): a key is bound to its item, the plan without a plan query or from a row
 * of its own words, a provider without an effect statement still fences and records, a commit that
 * fails after the database committed is ambiguous and lookup tells the truth, and a full or closed
 * pool throttles the caller instead of failing the item. On H2 in memory, a database per test.
 */
class JdbcProviderTest {

  static final String EFFECT_SQL =
      "INSERT INTO cleanup_log (item_id, amount_minor) VALUES (:itemId, :amountMinor)";
  static final AtomicInteger DATABASES = new AtomicInteger();

  String url;
  JdbcProvider provider;

  @BeforeEach
  void database() throws SQLException {
    url = "jdbc:h2:mem:jdbc-provider-" + DATABASES.incrementAndGet() + ";DB_CLOSE_DELAY=-1";
    execute(
        "CREATE TABLE cleanup_log (item_id VARCHAR NOT NULL, amount_minor BIGINT NOT NULL)",
        "CREATE TABLE balances (account_id VARCHAR PRIMARY KEY, amount_minor BIGINT NOT NULL,"
            + " note VARCHAR)");
  }

  @AfterEach
  void closeProvider() throws SQLException {
    if (provider != null) {
      provider.close();
    }
    execute("SHUTDOWN");
  }

  JdbcProvider start(JdbcProviderSettings settings) {
    provider = JdbcProvider.start(settings);
    return provider;
  }

  JdbcProviderSettings settings() {
    return JdbcProviderSettings.of(url, "sa", "");
  }

  @Test
  void aKeyAlreadyUsedForAnotherItemIsRefusedForGoodAndAppliesNothing() throws SQLException {
    start(settings().withEffectSql(EFFECT_SQL));
    ItemId first = item("a-1");
    ItemId second = item("a-2");
    result(provider.apply(cleanup(first, writeOff(100), "shared-key", 1)));

    ProviderError refused =
        failure(provider.apply(cleanup(second, writeOff(100), "shared-key", 1)));

    assertInstanceOf(ProviderError.Permanent.class, refused);
    assertTrue(refused.message().contains(first.value()), "names the item: " + refused.message());
    assertEquals(0, effects(second), "no effect for the item that reused the key");
    // it passed its item's fence before the stored effect was compared: the mark stays
    assertEquals(1, fence(second), "the fence it raised");
    assertEquals(1, effects(first));
  }

  @Test
  void withoutAPlanQueryEveryItemHasTheOneConfiguredCleanup() {
    start(settings());

    Plan plan = result(provider.plan(item("a-1")));

    assertFalse(plan.nothingToDo());
    assertEquals("cleanup", plan.action());
  }

  @Test
  void aPlanRowOfZeroIsNothingToDoAndARowsOwnWordsAreKept() throws SQLException {
    execute(
        "INSERT INTO balances VALUES ('owes', 250, 'refund the duplicate fee')",
        "INSERT INTO balances VALUES ('settled', 0, NULL)");
    start(
        settings()
            .withPlanSql(
                "SELECT amount_minor, note AS description FROM balances"
                    + " WHERE account_id = :accountId"));

    Plan owes = result(provider.plan(item("owes")));
    Plan settled = result(provider.plan(item("settled")));
    Plan unknown = result(provider.plan(item("nobody")));

    assertEquals(Plan.action("cleanup", 250, "refund the duplicate fee"), owes);
    assertTrue(settled.nothingToDo(), "an amount of 0 is nothing to clean up");
    assertTrue(unknown.nothingToDo(), "no row is nothing to clean up");
  }

  @Test
  void withoutAnEffectStatementTheFenceAndTheRecordStillCommitTogether() throws SQLException {
    start(settings());
    ItemId item = item("a-1");

    Receipt applied =
        result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 3)));
    ProviderError stale =
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 2)));

    assertEquals(Receipt.APPLIED, applied.status());
    assertEquals(applied, result(provider.lookup(item, item.idempotencyKey())).orElseThrow());
    assertEquals(new ProviderError.StaleToken(2, 3), stale);
    assertEquals(3, fence(item));
  }

  @Test
  void aCommitThatFailsAfterTheDatabaseCommittedIsAmbiguousAndLookupFindsTheEffect()
      throws SQLException {
    AtomicBoolean commitFails = new AtomicBoolean();
    provider =
        JdbcProvider.start(
            () -> failingCommitAfterwards(DriverManager.getConnection(url, "sa", ""), commitFails),
            settings().withEffectSql(EFFECT_SQL));
    ItemId item = item("a-1");

    commitFails.set(true);
    ProviderError lost =
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));
    commitFails.set(false);

    assertInstanceOf(ProviderError.Ambiguous.class, lost);
    Receipt found = result(provider.lookup(item, item.idempotencyKey())).orElseThrow();
    assertEquals(Receipt.APPLIED, found.status());
    Receipt again = result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 2)));
    assertEquals(found.asReplay(), again, "the reconciled attempt replays, it does not apply");
    assertEquals(1, effects(item));
  }

  @Test
  void aFullQueueAndAClosedProviderThrottleTheCallerInsteadOfFailingTheItem() throws Exception {
    CountDownLatch opened = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean hold = new AtomicBoolean();
    provider =
        JdbcProvider.start(
            () -> {
              if (hold.get()) {
                opened.countDown();
                await(release);
              }
              return DriverManager.getConnection(url, "sa", "");
            },
            settings().withThreads(1, 1));
    hold.set(true);
    CompletionStage<Plan> running = provider.plan(item("a-1"));
    assertTrue(opened.await(15, TimeUnit.SECONDS), "the one thread is busy");
    CompletionStage<Plan> queued = provider.plan(item("a-2"));

    ProviderError full = failure(provider.plan(item("a-3")));
    release.countDown();

    assertEquals(Duration.ofMillis(100), throttled(full).retryAfter());
    result(running);
    result(queued);
    provider.close();
    assertEquals(
        Duration.ofMillis(100), throttled(failure(provider.plan(item("a-4")))).retryAfter());
  }

  @Test
  void whatTheDatabaseRefusesIsForGoodAndEverythingElseIsTriedAgain() {
    for (String refusal : new String[] {"22001", "23502", "42601", "0A000"}) {
      assertInstanceOf(
          ProviderError.Permanent.class,
          JdbcProvider.classify(new SQLException("refused", refusal)),
          refusal);
    }
    // a concurrent apply of the same item won: a retry replays its effect
    assertInstanceOf(
        ProviderError.Transient.class,
        JdbcProvider.classify(new SQLException("duplicate key", "23505")));
    assertInstanceOf(
        ProviderError.Transient.class,
        JdbcProvider.classify(new SQLException("connection refused", "08001")));
    assertInstanceOf(
        ProviderError.Transient.class, JdbcProvider.classify(new SQLException("no state")));
  }

  @Test
  void aDatabaseItCannotPrepareIsRefusedAtStartNamingIt() {
    String missing = "jdbc:h2:mem:never-created;IFEXISTS=TRUE";

    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> JdbcProvider.start(JdbcProviderSettings.of(missing, "sa", "")));

    assertTrue(e.getMessage().contains(missing), e.getMessage());
  }

  /**
   * An effect table made before the identity was kept gets its columns at start, and its rows
   * (without them) are the same effect as any cleanup of their item: a replay, not key_reused.
   */
  @Test
  void effectRowsOfAnEarlierVersionReplayOnTheirItemAlone() throws SQLException {
    ItemId item = item("a-1");
    execute(
        "CREATE TABLE fencekeeper_fence (item_id VARCHAR PRIMARY KEY, token BIGINT NOT NULL)",
        "CREATE TABLE fencekeeper_effect (idempotency_key VARCHAR PRIMARY KEY,"
            + " item_id VARCHAR NOT NULL, effect_id VARCHAR NOT NULL,"
            + " fencing_token BIGINT NOT NULL, applied_at TIMESTAMP WITH TIME ZONE NOT NULL)",
        "INSERT INTO fencekeeper_effect VALUES ('"
            + item.idempotencyKey()
            + "', '"
            + item.value()
            + "', 'jdbc-before', 1, TIMESTAMP WITH TIME ZONE '2026-11-30 01:00:00+00')",
        "INSERT INTO fencekeeper_fence VALUES ('" + item.value() + "', 1)");
    start(settings().withEffectSql(EFFECT_SQL));

    Receipt again =
        result(
            provider.apply(
                cleanup(
                    item,
                    Plan.action("write-off-residual", 999, "EUR", "any amount"),
                    item.idempotencyKey(),
                    2)));

    assertEquals(Receipt.REPLAYED, again.status());
    assertEquals("jdbc-before", again.effectId());
    assertEquals(0, effects(item), "nothing applied again");
  }

  @Test
  void aCurrencyThatIsNotIso4217OrThatNothingCanGiveIsRefusedAtStart() throws SQLException {
    IllegalArgumentException lower =
        assertThrows(IllegalArgumentException.class, () -> settings().withCurrency("eur"));
    IllegalArgumentException nowhere =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                JdbcProvider.start(
                    settings()
                        .withEffectSql(
                            "INSERT INTO cleanup_log (item_id, amount_minor)"
                                + " SELECT :itemId, :amountMinor WHERE :currency IS NULL")));

    assertTrue(lower.getMessage().contains("ISO 4217"), lower.getMessage());
    assertTrue(nowhere.getMessage().contains(":currency"), nowhere.getMessage());
    assertTrue(nowhere.getMessage().contains("jdbc.currency"), nowhere.getMessage());
    execute("INSERT INTO balances VALUES ('odd', 5, NULL)");
    start(
        settings()
            .withPlanSql(
                "SELECT amount_minor, 'euro' AS currency FROM balances"
                    + " WHERE account_id = :accountId"));
    ProviderError refused = failure(provider.plan(item("odd")));
    assertInstanceOf(ProviderError.Permanent.class, refused);
    assertTrue(!refused.message().contains("euro"), "the row's value stays out: " + refused);
  }

  // --- helpers

  static ProviderError.Throttled throttled(ProviderError error) {
    return assertInstanceOf(ProviderError.Throttled.class, error);
  }

  static void await(CountDownLatch latch) {
    try {
      latch.await(15, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * {@code connection}, whose commit, while {@code fails}, commits and then throws as a connection
   * reset after the server committed would.
   */
  static Connection failingCommitAfterwards(Connection connection, AtomicBoolean fails) {
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object answer;
              try {
                answer = method.invoke(connection, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (method.getName().equals("commit") && fails.get()) {
                throw new SQLException("connection reset after commit", "08006");
              }
              return answer;
            });
  }

  void execute(String... statements) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  int effects(ItemId item) throws SQLException {
    return (int) queryLong("SELECT COUNT(*) FROM cleanup_log WHERE item_id = ?", item, 0);
  }

  long fence(ItemId item) throws SQLException {
    return queryLong("SELECT token FROM fencekeeper_fence WHERE item_id = ?", item, -1);
  }

  long queryLong(String sql, ItemId item, long none) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        PreparedStatement select = c.prepareStatement(sql)) {
      select.setString(1, item.value());
      try (ResultSet row = select.executeQuery()) {
        return row.next() ? row.getLong(1) : none;
      }
    }
  }
}

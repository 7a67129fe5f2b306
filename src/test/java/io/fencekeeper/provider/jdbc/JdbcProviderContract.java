package io.fencekeeper.provider.jdbc;

import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the jdbc provider promises, run against each supported database by a subclass: the fence
 * refuses stale tokens in SQL, a repeated key is a replay, and effect, fence and record commit
 * together or not at all.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcProviderContract {

  static final String EFFECT_SQL =
      "INSERT INTO cleanup_log (item_id, account_id, business_date, amount_minor, currency)"
          + " VALUES (:itemId, :accountId, :businessDate, :amountMinor, :currency)";
  static final String PLAN_SQL =
      "SELECT amount_minor, 'write-off-residual' AS action, currency FROM balances"
          + " WHERE account_id = :accountId";

  private JdbcProvider provider;

  /** Starts the database (if it needs starting) and answers a JDBC URL for it. */
  abstract String startDatabase() throws Exception;

  abstract String user();

  abstract String password();

  abstract void stopDatabase() throws Exception;

  String url;

  @BeforeAll
  void startProvider() throws Exception {
    url = startDatabase();
    try (Connection connection = connect();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE IF NOT EXISTS cleanup_log (item_id VARCHAR NOT NULL,"
              + " account_id VARCHAR NOT NULL, business_date DATE NOT NULL,"
              + " amount_minor BIGINT NOT NULL CHECK (amount_minor >= 0), currency VARCHAR(3))");
      statement.execute(
          "CREATE TABLE IF NOT EXISTS balances (account_id VARCHAR PRIMARY KEY,"
              + " amount_minor BIGINT NOT NULL, currency VARCHAR(3))");
    }
    provider =
        JdbcProvider.start(
            JdbcProviderSettings.of(url, user(), password())
                .withEffectSql(EFFECT_SQL)
                .withPlanSql(PLAN_SQL)
                .withCurrency("EUR")
                .withThreads(4, 64));
  }

  @AfterAll
  void stopProvider() throws Exception {
    if (provider != null) {
      provider.close();
    }
    stopDatabase();
  }

  @BeforeEach
  void emptyTables() throws SQLException {
    try (Connection connection = connect();
        Statement statement = connection.createStatement()) {
      for (String table :
          List.of("cleanup_log", "balances", "fencekeeper_fence", "fencekeeper_effect")) {
        statement.execute("DELETE FROM " + table);
      }
    }
  }

  @Test
  void staleTokenCannotWriteEvenWhenCalledDirectly() throws SQLException {
    ItemId item = item("a-1");
    result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 5)));

    ProviderError sameKey =
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 4)));
    // the fence is per item, not per key: even a caller with another key cannot slip past it
    ProviderError otherKey =
        failure(provider.apply(cleanup(item, writeOff(100), "another-key", 4)));

    assertEquals(new ProviderError.StaleToken(4, 5), sameKey);
    assertEquals(new ProviderError.StaleToken(4, 5), otherKey);
    assertEquals(1, effectsApplied(item));
    assertEquals(5, fenceToken(item));
  }

  @Test
  void repeatedApplyWithTheSameKeyAppliesOnce() throws SQLException {
    ItemId item = item("a-2");

    Receipt first = result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));
    Receipt retry = result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));
    // a newer claim after an ambiguous attempt gets the first result back, not a second effect
    Receipt newerClaim =
        result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 2)));

    assertEquals(Receipt.APPLIED, first.status());
    assertEquals(first.asReplay(), retry);
    assertEquals(first.asReplay(), newerClaim);
    assertEquals(1, effectsApplied(item));
    assertEquals(2, fenceToken(item));
  }

  @Test
  void lookupFindsTheCommittedEffectAndNothingElse() {
    ItemId item = item("a-3");
    assertTrue(result(provider.lookup(item, item.idempotencyKey())).isEmpty());

    Receipt applied =
        result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

    assertEquals(applied, result(provider.lookup(item, item.idempotencyKey())).orElseThrow());
  }

  /**
   * The effect runs after a savepoint: its failure rolls back to it, and the fence the request
   * raised is committed on its own (docs/provider-protocol.md, "Fencing").
   */
  @Test
  void failedEffectStatementLeavesNoRecordButKeepsTheRaisedFence() throws SQLException {
    ItemId item = item("a-4");

    ProviderError refused =
        failure(provider.apply(cleanup(item, writeOff(-1), item.idempotencyKey(), 9)));

    assertInstanceOf(ProviderError.Permanent.class, refused);
    assertTrue(result(provider.lookup(item, item.idempotencyKey())).isEmpty());
    assertEquals(0, effectsApplied(item));
    assertEquals(9, fenceToken(item), "the mark stays raised");
    assertEquals(
        new ProviderError.StaleToken(8, 9),
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 8))),
        "a lower token is refused by the mark the failed request left");
  }

  @Test
  void concurrentAppliesOfOneItemApplyOnce() throws SQLException {
    ItemId item = item("a-5");
    List<CompletionStage<Receipt>> attempts = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      attempts.add(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));
    }
    int applied = 0;
    for (CompletionStage<Receipt> attempt : attempts) {
      CompletableFuture<Receipt> future = attempt.toCompletableFuture();
      try {
        if (result(future).status().equals(Receipt.APPLIED)) {
          applied++;
        }
      } catch (AssertionError lostTheRace) {
        // a loser may be told to retry (Transient), which then replays; never a second effect
        assertInstanceOf(ProviderError.Transient.class, failure(future));
      }
    }

    assertEquals(1, applied);
    assertEquals(1, effectsApplied(item));
  }

  @Test
  void planComesFromTheConfiguredQuery() throws SQLException {
    try (Connection connection = connect();
        PreparedStatement insert =
            connection.prepareStatement(
                "INSERT INTO balances (account_id, amount_minor) VALUES (?, ?)")) {
      insert.setString(1, "a-6");
      insert.setLong(2, 250);
      insert.executeUpdate();
    }

    Plan owed = result(provider.plan(item("a-6")));
    Plan clean = result(provider.plan(item("a-7")));

    assertEquals(false, owed.nothingToDo());
    assertEquals("write-off-residual", owed.action());
    assertEquals(250, owed.amountMinor());
    assertTrue(clean.nothingToDo());
  }

  /**
   * The effect's identity decides a repeated key (docs/provider-protocol.md, "The effect's
   * identity"): a description is not part of it, an amount is; the refused repeat still raised the
   * fence.
   */
  @Test
  void aRepeatedKeyIsComparedOnTheEffectsIdentity() throws SQLException {
    ItemId item = item("a-8");
    result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

    Receipt redescribed =
        result(
            provider.apply(
                cleanup(
                    item,
                    Plan.action("write-off-residual", 100, "EUR", "described anew"),
                    item.idempotencyKey(),
                    1)));
    ProviderError more =
        failure(provider.apply(cleanup(item, writeOff(101), item.idempotencyKey(), 3)));

    assertEquals(Receipt.REPLAYED, redescribed.status(), "a stored row without a currency");
    assertInstanceOf(ProviderError.Permanent.class, more);
    assertTrue(more.message().contains("key_reused"), more.message());
    assertTrue(more.message().contains("amountMinor"), more.message());
    assertEquals(1, effectsApplied(item));
    assertEquals(3, fenceToken(item), "the refused request passed the fence: the mark stays");
  }

  /** A currency is compared only when both the stored effect and the repeat carry one. */
  @Test
  void aCurrencyIsComparedOnlyWhenBothCarryOne() {
    ItemId item = item("a-9");
    Plan euros = Plan.action("write-off-residual", 100, "EUR", "write off 100");
    result(provider.apply(cleanup(item, euros, item.idempotencyKey(), 1)));

    assertEquals(
        Receipt.REPLAYED,
        result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1))).status(),
        "a 1.0 plan's cleanup has no currency");
    assertInstanceOf(
        ProviderError.Permanent.class,
        failure(
            provider.apply(
                cleanup(
                    item,
                    Plan.action("write-off-residual", 100, "USD", "write off 100"),
                    item.idempotencyKey(),
                    1))));
  }

  /**
   * Step 6: by the database's clock the deadline has passed, so nothing is applied; the fence the
   * request raised stays, and the key is free for a cleanup with a deadline ahead.
   */
  @Test
  void aCleanupPastItsDeadlineAppliesNothingAndKeepsTheRaisedFence() throws SQLException {
    ItemId item = item("a-10");
    Cleanup late =
        new Cleanup(item, writeOff(100), item.idempotencyKey(), 4, Instant.now().minusSeconds(1));

    ProviderError refused = failure(provider.apply(late));

    assertInstanceOf(ProviderError.Transient.class, refused);
    assertTrue(refused.message().contains("deadline_passed"), refused.message());
    assertTrue(result(provider.lookup(item, item.idempotencyKey())).isEmpty());
    assertEquals(0, effectsApplied(item));
    assertEquals(4, fenceToken(item));
    assertEquals(
        Receipt.APPLIED,
        result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 4))).status());
  }

  /**
   * The plan's currency comes from the plan query's currency column, or from jdbc.currency when the
   * row has none; the effect statement gets it as :currency.
   */
  @Test
  void thePlansCurrencyComesFromItsRowOrTheSettingAndReachesTheStatement() throws SQLException {
    try (Connection connection = connect();
        Statement insert = connection.createStatement()) {
      insert.execute(
          "INSERT INTO balances (account_id, amount_minor, currency) VALUES ('a-11', 5, 'USD')");
      insert.execute("INSERT INTO balances (account_id, amount_minor) VALUES ('a-12', 7)");
    }
    ItemId dollars = item("a-11");
    Plan dollarPlan = result(provider.plan(dollars));
    Plan defaultPlan = result(provider.plan(item("a-12")));

    assertEquals("USD", dollarPlan.currency());
    assertEquals("EUR", defaultPlan.currency(), "jdbc.currency when the row has none");
    result(provider.apply(cleanup(dollars, dollarPlan, dollars.idempotencyKey(), 1)));
    try (Connection connection = connect();
        Statement select = connection.createStatement();
        ResultSet row =
            select.executeQuery("SELECT currency FROM cleanup_log WHERE account_id = 'a-11'")) {
      assertTrue(row.next());
      assertEquals("USD", row.getString(1));
    }
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url, user(), password());
  }

  int effectsApplied(ItemId item) throws SQLException {
    try (Connection connection = connect();
        PreparedStatement count =
            connection.prepareStatement("SELECT COUNT(*) FROM cleanup_log WHERE item_id = ?")) {
      count.setString(1, item.value());
      try (ResultSet row = count.executeQuery()) {
        row.next();
        return row.getInt(1);
      }
    }
  }

  long fenceToken(ItemId item) throws SQLException {
    try (Connection connection = connect();
        PreparedStatement select =
            connection.prepareStatement("SELECT token FROM fencekeeper_fence WHERE item_id = ?")) {
      select.setString(1, item.value());
      try (ResultSet row = select.executeQuery()) {
        return row.next() ? row.getLong(1) : -1;
      }
    }
  }
}

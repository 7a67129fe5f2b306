package com.example.cleanup;

import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.ProviderContext;
import io.fencekeeper.sdk.provider.check.CheckAccount;
import io.fencekeeper.sdk.provider.testkit.CleanupProviderTestKit;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The provider proven by Fencekeeper's test kit against a real PostgreSQL (an embedded one): every
 * guarantee it claims is a test of its own, with real write-offs on accounts seeded here.
 */
class PostgresCleanupProviderTest extends CleanupProviderTestKit {

  /** The checks take an account with a residual for each guarantee; a few more do no harm. */
  static final int ACCOUNTS = 10;

  static EmbeddedPostgres postgres;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = EmbeddedPostgres.builder().start();
    try (Connection connection = postgres.getPostgresDatabase().getConnection();
        Statement ddl = connection.createStatement()) {
      for (String table : PostgresCleanupProvider.SCHEMA) {
        ddl.execute(table);
      }
      try (PreparedStatement seed =
          connection.prepareStatement(
              "INSERT INTO account_residual (account_id, amount_minor, currency)"
                  + " VALUES (?, ?, 'EUR') ON CONFLICT (account_id) DO NOTHING")) {
        for (int i = 1; i <= ACCOUNTS; i++) {
          seed.setString(1, "test-" + i);
          seed.setLong(2, 100L * i);
          seed.executeUpdate();
        }
      }
    }
  }

  @AfterAll
  static void stopPostgres() throws Exception {
    if (postgres != null) {
      postgres.close();
    }
  }

  @Override
  protected CleanupProvider provider() {
    return new PostgresCleanupProvider(
        new ProviderContext(
            "ledger",
            Map.of("url", postgres.getJdbcUrl("postgres", "postgres"), "user", "postgres")));
  }

  @Override
  protected List<CheckAccount> safeAccounts() {
    List<CheckAccount> accounts = new ArrayList<>();
    for (int i = 1; i <= ACCOUNTS; i++) {
      accounts.add(new CheckAccount("test-" + i, "c1"));
    }
    return accounts;
  }
}

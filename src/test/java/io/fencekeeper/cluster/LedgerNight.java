package io.fencekeeper.cluster;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.ExamplePlugin;
import io.fencekeeper.testing.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A night through the example provider plugin ({@code examples/postgres-provider}, built by {@link
 * ExamplePlugin}): its write-off ledger in a PostgreSQL database of its own, seeded with a residual
 * for each account, and the named provider {@value #PROVIDER} that loads the plugin on every node.
 * What it left is read from its tables: the write-off lines per key and the balances.
 */
final class LedgerNight {

  static final String PROVIDER = "ledger";

  final TestDatabases.Target db;
  final List<AccountCursor> accounts;

  private LedgerNight(TestDatabases.Target db, List<AccountCursor> accounts) {
    this.db = db;
    this.accounts = accounts;
  }

  /** A ledger database with a residual of {@code 1000 + i} EUR cents on each account. */
  static LedgerNight seed(List<AccountCursor> accounts) throws Exception {
    TestDatabases.Target db = TestDatabases.freshPostgres();
    Map<String, Long> residuals = new java.util.LinkedHashMap<>();
    for (int i = 0; i < accounts.size(); i++) {
      residuals.put(accounts.get(i).accountId(), residual(i));
    }
    ExamplePlugin.seedResiduals(db, residuals);
    return new LedgerNight(db, accounts);
  }

  private static long residual(int index) {
    return 1000L + index;
  }

  /** {@code fencekeeper.providers.ledger}: the plugin, from the directory its build left. */
  Map<String, Object> providerConfig() {
    String block = "fencekeeper.providers." + PROVIDER + ".";
    Map<String, Object> config = new HashMap<>();
    config.put(block + "kind", "java");
    config.put(block + "class", ExamplePlugin.CLASS);
    config.put(block + "path", ExamplePlugin.pluginDirectory().toString());
    config.put(block + "settings.url", db.url());
    config.put(block + "settings.user", db.user());
    config.put(block + "settings.password", db.password());
    config.put(block + "settings.max-connections", "4");
    return config;
  }

  /**
   * What is wrong with the ledger after a night of {@code job}: every account's item must have
   * exactly one write-off line under its key, of the seeded amount, and its residual must be 0.
   * Empty when the night applied each cleanup exactly once.
   */
  Map<String, String> discrepancies(String job) throws Exception {
    Map<String, long[]> lines = new HashMap<>(); // key -> {count, amount written off}
    Map<String, Long> left = new HashMap<>();
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement s = c.createStatement()) {
      try (ResultSet r =
          s.executeQuery(
              "SELECT idempotency_key, count(*), SUM(amount_minor) FROM cleanup_effect"
                  + " GROUP BY idempotency_key")) {
        while (r.next()) {
          lines.put(r.getString(1), new long[] {r.getLong(2), r.getLong(3)});
        }
      }
      try (ResultSet r = s.executeQuery("SELECT account_id, amount_minor FROM account_residual")) {
        while (r.next()) {
          left.put(r.getString(1), r.getLong(2));
        }
      }
    }
    Map<String, String> wrong = new TreeMap<>();
    for (int i = 0; i < accounts.size(); i++) {
      AccountCursor account = accounts.get(i);
      String key =
          ItemId.of(job, ClusterFixture.DATE, account.accountId(), account.cursor())
              .idempotencyKey();
      long[] line = lines.getOrDefault(key, new long[] {0, 0});
      long remaining = left.getOrDefault(account.accountId(), -1L);
      if (line[0] != 1 || line[1] != residual(i) || remaining != 0) {
        wrong.put(
            account.accountId(),
            line[0] + " lines, " + line[1] + " written off, " + remaining + " left");
      }
    }
    return wrong;
  }

  /** Write-off lines in the ledger, all keys. */
  int lines() throws Exception {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT count(*) FROM cleanup_effect")) {
      r.next();
      return r.getInt(1);
    }
  }
}

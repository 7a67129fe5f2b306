package io.fencekeeper.api;

import io.fencekeeper.testing.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

/**
 * A support database for SQL scopes: a fresh PostgreSQL database with an {@code accounts} table
 * (account_id, cursor) of {@code acct-1..acct-N} at {@code c-1}, and a login role that may only
 * read it, as an operator would set one up.
 */
final class ScopeSqlSource {

  private ScopeSqlSource() {}

  /**
   * The node settings that point {@code fencekeeper.scope-sql} at a new source of {@code accounts}
   * rows, plus each of {@code extraRows} (SQL value lists, e.g. {@code ('bad value', 'c-1')}).
   */
  static Map<String, Object> settings(int accounts, String... extraRows) throws SQLException {
    TestDatabases.Target support = TestDatabases.freshPostgres();
    String role = "scope_reader_" + System.nanoTime();
    try (Connection c =
            DriverManager.getConnection(support.url(), support.user(), support.password());
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE accounts (account_id VARCHAR(64), cursor VARCHAR(64))");
      s.execute(
          "INSERT INTO accounts SELECT 'acct-' || n, 'c-1' FROM generate_series(1, "
              + accounts
              + ") AS n");
      for (String row : extraRows) {
        s.execute("INSERT INTO accounts VALUES " + row);
      }
      s.execute("CREATE ROLE " + role + " LOGIN PASSWORD 'reader'");
      s.execute("GRANT SELECT ON accounts TO " + role);
    }
    Map<String, Object> settings = new HashMap<>();
    settings.put("fencekeeper.scope-sql.url", support.url().replaceAll("\\?.*", ""));
    settings.put("fencekeeper.scope-sql.user", role);
    settings.put("fencekeeper.scope-sql.password", "reader");
    return settings;
  }
}

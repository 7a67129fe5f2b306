package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * What the scope query itself decides, beside the guards the scope reader's contract tests on each
 * database ({@link ScopeReaderSqlContract}): it fetches one row more than a run may have so the
 * intake can tell "too many" from "exactly the limit", hands rows on numbered and without a CHAR
 * column's padding, refuses a source it cannot hold to read-only before connecting, and words a
 * failure by where PostgreSQL points and by rule, the same rule for either database's code.
 */
class SqlScopeQueryTest {

  @TempDir Path dir;

  record Row(long number, String accountId, String cursor) {}

  /** A support database of {@code rows} accounts, opened read-only by a user without admin. */
  SqlSource support(int rows) throws SQLException {
    String url = "jdbc:h2:file:" + dir.resolve("support").toAbsolutePath();
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE accounts (seq INT PRIMARY KEY, account_id CHAR(12), cursor CHAR(6))");
      for (int i = 1; i <= rows; i++) {
        s.execute("INSERT INTO accounts VALUES (" + i + ", 'acct-" + i + "', 'c-1')");
      }
      s.execute("CREATE USER reader PASSWORD 'reader'");
      s.execute("GRANT SELECT ON accounts TO reader");
    }
    return new SqlSource(url + ";ACCESS_MODE_DATA=r", "reader", "reader");
  }

  static List<Row> read(SqlSource source, long maxRows, String query) {
    List<Row> rows = new ArrayList<>();
    new SqlScopeQuery(source, Duration.ofSeconds(10), maxRows, 2)
        .run(query, (number, account, cursor) -> rows.add(new Row(number, account, cursor)));
    return rows;
  }

  @Test
  void itFetchesOneRowMoreThanARunMayHaveAndNoMore() throws SQLException {
    SqlSource source = support(10);

    List<Row> rows = read(source, 3, "SELECT account_id, cursor FROM accounts ORDER BY seq");

    assertEquals(
        List.of(
            new Row(1, "acct-1", "c-1"),
            new Row(2, "acct-2", "c-1"),
            new Row(3, "acct-3", "c-1"),
            new Row(4, "acct-4", "c-1")),
        rows,
        "numbered from 1, the CHAR padding gone, the fourth row tells the intake there are more");
  }

  @Test
  void aSourceItCannotHoldToReadOnlyIsRefusedBeforeItConnects() {
    SqlSource derby = new SqlSource("jdbc:derby:memory:support", "reader", "secret");

    ScopeRefused refused =
        assertThrows(ScopeRefused.class, () -> read(derby, 10, "SELECT 1 AS account_id"));

    assertEquals("scope", refused.field());
    assertTrue(refused.getMessage().contains("must be PostgreSQL or H2"), refused.getMessage());
    assertFalse(refused.getMessage().contains("secret"));
  }

  @Test
  void aFailureSaysWherePostgresPointsAndTheRuleNeverTheServersWords() {
    String query = "SELECT account_id, cursor\nFROM acounts\nWHERE balance > 0";
    // position 32 (from 1) is the 'a' of "acounts", on the second line
    PSQLException missingTable =
        new PSQLException(
            new ServerErrorMessage(
                "SERROR\0C42P01\0P32\0Mrelation \"acounts\" does not exist (acct-secret)\0"));

    String message = SqlScopeQuery.failure(query, missingTable);

    assertEquals(
        "scope SQL query failed at line 2, column 6: a table or view does not exist or is not"
            + " visible to the scope role (SQLState 42P01)",
        message);
  }

  @Test
  void eitherDatabasesCodeForTheSameMistakeReadsAsTheSameRule() {
    String query = "SELECT 1";
    assertEquals(
        rule(SqlScopeQuery.failure(query, new SQLException("x", "25006"))),
        rule(SqlScopeQuery.failure(query, new SQLException("x", "90097"))),
        "a write: PostgreSQL's read-only transaction, H2's read-only database");
    assertEquals(
        rule(SqlScopeQuery.failure(query, new SQLException("x", "42P01"))),
        rule(SqlScopeQuery.failure(query, new SQLException("x", "42102"))),
        "a missing table");
    assertEquals(
        "scope SQL query failed: the database hit a resource limit (SQLState 53200)",
        SqlScopeQuery.failure(query, new SQLException("out of memory", "53200")));
    assertEquals(
        "scope SQL query failed: the database refused the query (SQLState unknown)",
        SqlScopeQuery.failure(query, new SQLException("no state")));
  }

  /** The rule of a failure message, without its SQLState. */
  static String rule(String message) {
    return message.substring(0, message.lastIndexOf(" (SQLState"));
  }
}

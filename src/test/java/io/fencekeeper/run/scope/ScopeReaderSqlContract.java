package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A SQL scope against a real database; one subclass per database the support side may run. */
abstract class ScopeReaderSqlContract {

  abstract SqlSource source();

  ScopeReader reader() {
    return new ScopeReader(Optional.of(source()));
  }

  @BeforeEach
  void accountsTable() throws SQLException {
    execute("DROP TABLE IF EXISTS accounts");
    execute(
        "CREATE TABLE accounts (seq INT PRIMARY KEY, account_id VARCHAR(64), cursor VARCHAR(64))");
  }

  @Test
  void readsTheQueryRowsInOrderAndInBatches() throws SQLException {
    insertAccounts(1500);
    List<List<AccountCursor>> batches = new ArrayList<>();

    ScopeSummary summary =
        reader()
            .read(
                new Scope.Sql("SELECT account_id, cursor FROM accounts ORDER BY seq"),
                batches::add);

    assertEquals(1500, summary.count());
    assertEquals(List.of(1000, 500), batches.stream().map(List::size).toList());
    assertEquals(new AccountCursor("acct-00000", "cur-0"), batches.get(0).get(0));
    assertEquals(new AccountCursor("acct-01499", "cur-3"), batches.get(1).get(499));
  }

  @Test
  void sameRowsDigestLikeTheSameAccountsInline() throws SQLException {
    insertAccounts(3);
    List<AccountCursor> inline = new ArrayList<>();
    ScopeSummary fromSql =
        reader()
            .read(
                new Scope.Sql("select account_id, cursor from accounts order by seq;"),
                inline::addAll);

    assertEquals(fromSql, reader().read(new Scope.Inline(inline), b -> {}));
  }

  @Test
  void camelCaseColumnNamesAreAccepted() throws SQLException {
    insertAccounts(2);

    ScopeSummary summary =
        reader()
            .read(
                new Scope.Sql("select cursor, account_id as accountId from accounts order by seq"),
                b -> {});

    assertEquals(2, summary.count());
  }

  @Test
  void missingColumnIsNamedWithWhatTheQueryReturned() throws SQLException {
    insertAccounts(2);

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(new Scope.Sql("select account_id as id, seq from accounts"), b -> {}));

    assertTrue(
        e.getMessage()
            .startsWith(
                "scope SQL query must return the columns account_id (or accountId)"
                    + " and cursor; missing account_id (or accountId) and cursor, it returned ["),
        e.getMessage());
  }

  @Test
  void badRowsAreReportedByRowNumber() throws SQLException {
    insertAccounts(2);
    insert(10, "acct-00000", "cur-0");
    insert(11, "acct 11", "cur-1");
    insert(12, "acct-12", null);

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(
                        new Scope.Sql("select account_id, cursor from accounts order by seq"),
                        b -> {}));

    assertEquals(
        List.of(
            "row 3: duplicate of row 1 (accountId 'acct-00000', cursor 'cur-0')",
            "row 4: accountId must be 1-128 characters of letters, digits or ._:@+=- (got 'acct 11')",
            "row 5: cursor must be 1-128 characters of letters, digits or ._:@+=- (got nothing)"),
        e.problems());
  }

  @Test
  void emptyResultHasNoAccounts() {
    ScopeException e =
        assertThrows(
            ScopeException.class,
            () -> reader().read(new Scope.Sql("select account_id, cursor from accounts"), b -> {}));

    assertEquals("scope SQL query has no accounts", e.getMessage());
  }

  @Test
  void statementsOtherThanOneSelectAreRefusedAndChangeNothing() throws SQLException {
    insertAccounts(3);

    assertRefused(
        "delete from accounts", "must be a single SELECT statement (it starts with 'delete");
    assertRefused(
        "select account_id, cursor from accounts; delete from accounts",
        "must be a single SELECT statement: remove the ';'");
    assertRefused("select account_id, cursor into copy from accounts", "'INTO' is not allowed");
    assertRefused("select account_id, cursor from accounts for update", "'UPDATE' is not allowed");
    assertRefused(
        "/* select */ update accounts set cursor = 'x'", "it starts with '/* select */ update");

    assertEquals(
        3,
        reader().read(new Scope.Sql("select account_id, cursor from accounts"), b -> {}).count());
  }

  @Test
  void wordsInsideLiteralsAndQuotedNamesAreNotKeywords() throws SQLException {
    insertAccounts(2);

    ScopeSummary summary =
        reader()
            .read(
                new Scope.Sql(
                    "-- nightly scope\nselect account_id, cursor as \"cursor\" from accounts"
                        + " where cursor <> 'update' /* not a write */"),
                b -> {});

    assertEquals(2, summary.count());
  }

  @Test
  void failingQueryIsReportedWithTheDatabaseMessage() {
    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(new Scope.Sql("select account_id, cursor from no_such_table"), b -> {}));

    assertTrue(e.getMessage().startsWith("scope SQL query failed: "), e.getMessage());
    assertTrue(e.getMessage().toLowerCase().contains("no_such_table"), e.getMessage());
  }

  void insertAccounts(int count) throws SQLException {
    try (Connection c = connect();
        PreparedStatement insert =
            c.prepareStatement("INSERT INTO accounts (seq, account_id, cursor) VALUES (?, ?, ?)")) {
      for (int i = 0; i < count; i++) {
        insert.setInt(1, i);
        insert.setString(2, String.format("acct-%05d", i));
        insert.setString(3, "cur-" + (i % 17));
        insert.addBatch();
      }
      insert.executeBatch();
    }
  }

  void insert(int seq, String accountId, String cursor) throws SQLException {
    try (Connection c = connect();
        PreparedStatement insert =
            c.prepareStatement("INSERT INTO accounts (seq, account_id, cursor) VALUES (?, ?, ?)")) {
      insert.setInt(1, seq);
      insert.setString(2, accountId);
      insert.setString(3, cursor);
      insert.executeUpdate();
    }
  }

  int countAccounts() throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM accounts")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  void execute(String sql) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(source().url(), source().user(), source().password());
  }

  private void assertRefused(String query, String reason) {
    ScopeException e =
        assertThrows(ScopeException.class, () -> reader().read(new Scope.Sql(query), b -> {}));
    assertTrue(e.getMessage().contains(reason), e.getMessage());
  }
}

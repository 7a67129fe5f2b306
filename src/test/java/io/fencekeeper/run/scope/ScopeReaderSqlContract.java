package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A SQL scope against a real database; one subclass per database the support side may run. */
abstract class ScopeReaderSqlContract {

  /** The source the reader uses: a role that may only read the support tables. */
  abstract SqlSource source();

  /** The owner of the test tables, for setting up and for checking that nothing changed. */
  abstract SqlSource owner();

  /** Lets the reading role read the accounts table. */
  abstract void grantRead() throws SQLException;

  ScopeReader reader() {
    return reader(source());
  }

  static ScopeReader reader(SqlSource source) {
    return new ScopeReader(ScopeSettings.in(Path.of("")).withSqlSource(source));
  }

  @BeforeEach
  void accountsTable() throws SQLException {
    execute("DROP TABLE IF EXISTS accounts");
    execute(
        "CREATE TABLE accounts (seq INT PRIMARY KEY, account_id VARCHAR(64), cursor VARCHAR(64))");
    grantRead();
  }

  @Test
  void readsTheQueryRowsInOrderAndInBatches() throws SQLException {
    insertAccounts(1500);
    List<List<AccountCursor>> batches = new ArrayList<>();

    ScopeSummary summary =
        reader()
            .read(
                new Scope.Sql("SELECT account_id, cursor FROM accounts ORDER BY seq"),
                CollectingSink.into(batches::add));

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
                CollectingSink.into(inline::addAll));

    assertEquals(fromSql, reader().read(new Scope.Inline(inline), CollectingSink.discarding()));
  }

  @Test
  void camelCaseColumnNamesAreAccepted() throws SQLException {
    insertAccounts(2);

    ScopeSummary summary =
        reader()
            .read(
                new Scope.Sql("select cursor, account_id as accountId from accounts order by seq"),
                CollectingSink.discarding());

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
                    .read(
                        new Scope.Sql("select account_id as id, seq from accounts"),
                        CollectingSink.discarding()));

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
                        CollectingSink.discarding()));

    assertEquals(
        List.of(
            "row 3: duplicate of row 1",
            "row 4: accountId must be 1-128 characters of letters, digits or ._:@+=-",
            "row 5: cursor must be 1-128 characters of letters, digits or ._:@+=-"),
        e.problems());
    assertFalse(e.getMessage().contains("acct"), "no row value is echoed: " + e.getMessage());
  }

  @Test
  void emptyResultHasNoAccounts() {
    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(
                        new Scope.Sql("select account_id, cursor from accounts"),
                        CollectingSink.discarding()));

    assertEquals("scope SQL query has no accounts", e.getMessage());
  }

  @Test
  void statementsOtherThanOneSelectAreRefusedAndChangeNothing() throws SQLException {
    insertAccounts(3);

    assertRefused(
        "delete from accounts",
        "must be a single SELECT statement (its code starts with the keyword DELETE)");
    assertRefused(
        "select account_id, cursor from accounts; delete from accounts",
        "must be a single SELECT statement: remove the ';'");
    assertRefused("select account_id, cursor into copy from accounts", "'INTO' is not allowed");
    assertRefused("select account_id, cursor from accounts for update", "'UPDATE' is not allowed");
    assertRefused(
        "/* select */ update accounts set cursor = 'x'", "its code starts with the keyword UPDATE");

    assertEquals(
        3,
        reader()
            .read(
                new Scope.Sql("select account_id, cursor from accounts"),
                CollectingSink.discarding())
            .count());
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
                CollectingSink.discarding());

    assertEquals(2, summary.count());
  }

  @Test
  void aFailingQueryIsReportedBySqlStateAndRuleNeverByTheDriversMessage() {
    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(
                        new Scope.Sql("select account_id, cursor\nfrom no_such_table"),
                        CollectingSink.discarding()));

    assertTrue(e.getMessage().startsWith("scope SQL query failed"), e.getMessage());
    assertTrue(e.getMessage().contains("a table or view does not exist"), e.getMessage());
    assertTrue(e.getMessage().contains("(SQLState "), e.getMessage());
    assertFalse(e.getMessage().contains("jdbc:"), e.getMessage());
    assertFalse(e.getMessage().toLowerCase().contains("no_such_table"), e.getMessage());
  }

  @Test
  void rowValuesNeverComeBackInAnError() throws SQLException {
    insert(1, "acct-1", "cur-1");
    insert(2, "secret value", "cur-2");
    insert(3, "acct-1", "cur-1");

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(
                        new Scope.Sql("select account_id, cursor from accounts order by seq"),
                        CollectingSink.discarding()));

    assertEquals(
        List.of(
            "row 2: accountId must be 1-128 characters of letters, digits or ._:@+=-",
            "row 3: duplicate of row 1"),
        e.problems());
    assertFalse(e.getMessage().contains("secret"), e.getMessage());
  }

  @Test
  void moreRowsThanARunMayHaveAreRefusedNamingTheLimit() throws SQLException {
    insertAccounts(12);
    ScopeReader capped =
        new ScopeReader(
            ScopeSettings.in(Path.of("")).withSqlSource(source()).withMaxItemsPerRun(10));

    ScopeTooLarge e =
        assertThrows(
            ScopeTooLarge.class,
            () ->
                capped.read(
                    new Scope.Sql("select account_id, cursor from accounts"),
                    CollectingSink.discarding()));

    assertEquals(10, e.limit());
    assertTrue(e.getMessage().contains("fencekeeper.max-items-per-run"), e.getMessage());
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
    return DriverManager.getConnection(owner().url(), owner().user(), owner().password());
  }

  private void assertRefused(String query, String reason) {
    ScopeException e =
        assertThrows(
            ScopeException.class,
            () -> reader().read(new Scope.Sql(query), CollectingSink.discarding()));
    assertTrue(e.getMessage().contains(reason), e.getMessage());
  }
}

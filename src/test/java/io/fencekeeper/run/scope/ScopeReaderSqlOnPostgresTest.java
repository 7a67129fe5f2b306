package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.localdb.PostgresBinaries;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL as the support database, read by the dedicated role of docs/security.md ("Scope
 * sources"): SELECT on the support tables, nothing else. The reader adds a READ ONLY transaction, a
 * server-side statement timeout and a refusal of superusers; these tests show that the functions a
 * keyword check lets through change nothing and read nothing.
 */
class ScopeReaderSqlOnPostgresTest extends ScopeReaderSqlContract {

  private static EmbeddedPostgres postgres;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = PostgresBinaries.builder().start();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE ROLE scope_reader LOGIN PASSWORD 'reader'");
    }
  }

  @AfterAll
  static void stopPostgres() throws IOException {
    postgres.close();
  }

  /** Without the user the embedded server's own URL carries: the source's user must count. */
  private static String url() {
    return "jdbc:postgresql://localhost:" + postgres.getPort() + "/postgres";
  }

  @Override
  SqlSource source() {
    return new SqlSource(url(), "scope_reader", "reader");
  }

  @Override
  SqlSource owner() {
    return new SqlSource(url(), "postgres", "");
  }

  @Override
  void grantRead() throws SQLException {
    execute("GRANT SELECT ON accounts TO scope_reader");
  }

  private ScopeException refused(String query) {
    return assertThrows(
        ScopeException.class,
        () -> reader().read(new Scope.Sql(query), CollectingSink.discarding()));
  }

  @Test
  void aWriteHiddenInAFunctionCallIsStoppedByTheReadOnlyTransaction() throws SQLException {
    insertAccounts(2);
    execute("CREATE SEQUENCE scope_probe");
    execute("GRANT USAGE ON SEQUENCE scope_probe TO scope_reader");

    ScopeException e = refused("select account_id, cursor, nextval('scope_probe') from accounts");

    assertTrue(e.getMessage().contains("the query tried to write"), e.getMessage());
    assertTrue(e.getMessage().contains("SQLState 25006"), e.getMessage());
    assertEquals(2, countAccounts());
  }

  @Test
  void queryToXmlCannotRunADeleteThroughTheKeywordCheck() throws SQLException {
    insertAccounts(3);

    ScopeException e =
        refused(
            "select account_id, cursor from accounts"
                + " where query_to_xml('delete from accounts', true, false, '') is not null");

    // refused as a write inside a non-volatile function (0A000), or by the READ ONLY transaction
    assertTrue(e.getMessage().startsWith("scope SQL query failed"), e.getMessage());
    assertEquals(3, countAccounts());
  }

  @Test
  void aWritableCteIsRefusedByTheTransactionNotOnlyByTheKeywordCheck() throws SQLException {
    insertAccounts(3);
    // straight to the query runner: the keyword check would refuse DELETE before the database
    SqlScopeQuery query = new SqlScopeQuery(source(), Duration.ofSeconds(10), 100, 100);

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                query.run(
                    "with gone as (delete from accounts returning account_id, cursor)"
                        + " select account_id, cursor from gone",
                    (row, account, cursor) -> {}));

    assertTrue(e.getMessage().contains("SQLState 25006"), e.getMessage());
    assertEquals(3, countAccounts());
  }

  @Test
  void pgReadFileIsRefusedAndNothingOfTheFileComesBack() throws SQLException {
    insertAccounts(1);

    ScopeException e =
        refused("select pg_read_file('/etc/passwd') as account_id, cursor from accounts");

    assertTrue(e.getMessage().contains("permission denied"), e.getMessage());
    assertTrue(e.getMessage().contains("SQLState 42501"), e.getMessage());
    assertFalse(e.getMessage().contains("root"), e.getMessage());
  }

  @Test
  void aSuperuserSourceIsRefusedBeforeTheQueryRuns() throws SQLException {
    insertAccounts(2);

    ScopeRefused e =
        assertThrows(
            ScopeRefused.class,
            () ->
                reader(owner())
                    .read(
                        new Scope.Sql(
                            "select pg_read_file('/etc/passwd') as account_id, cursor from accounts"),
                        CollectingSink.discarding()));

    assertTrue(e.getMessage().contains("superuser"), e.getMessage());
    assertFalse(e.getMessage().contains("root:"), e.getMessage());
  }

  @Test
  void pgSleepBeyondTheTimeoutIsCutOffByTheServer() {
    ScopeReader impatient =
        new ScopeReader(
            ScopeSettings.in(Path.of(""))
                .withSqlSource(source())
                .withSqlTimeout(Duration.ofSeconds(1)));
    long started = System.nanoTime();

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                impatient.read(
                    new Scope.Sql("select 'a-1' as account_id, 'c-1' as cursor from pg_sleep(30)"),
                    CollectingSink.discarding()));

    assertEquals("scope SQL query did not finish within 1s", e.getMessage());
    // the client-side fallback would only cancel after timeout + 5 s: the server stopped it
    assertTrue(
        Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(5)) < 0,
        "cut off by the server's statement_timeout");
  }

  @Test
  void anUnreachableSourceIsReportedWithoutItsUrlOrPassword() {
    ScopeReader unreachable =
        reader(new SqlSource("jdbc:postgresql://127.0.0.1:1/support", "u", "secret"));

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                unreachable.read(
                    new Scope.Sql("select account_id, cursor from accounts"),
                    CollectingSink.discarding()));

    assertTrue(
        e.getMessage().startsWith("cannot connect to the scope SQL data source (SQLState "),
        e.getMessage());
    assertFalse(e.getMessage().contains("127.0.0.1"), e.getMessage());
    assertFalse(e.getMessage().contains("secret"), e.getMessage());
  }

  @Test
  void theDocumentedRoleIsEnoughToReadAScope() throws Exception {
    insertAccounts(5);
    // docs/security.md: a login role with SELECT on the support tables and nothing else
    try (Connection c =
            DriverManager.getConnection(owner().url(), owner().user(), owner().password());
        Statement s = c.createStatement()) {
      s.execute("CREATE ROLE documented_reader LOGIN PASSWORD 'reader'");
      s.execute("GRANT SELECT ON accounts TO documented_reader");
    }

    ScopeSummary summary =
        reader(new SqlSource(owner().url(), "documented_reader", "reader"))
            .read(
                new Scope.Sql("select account_id, cursor from accounts order by seq"),
                CollectingSink.discarding());

    assertEquals(5, summary.count());
  }
}

package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * H2 as the support database: only a database this node opens read-only, as a user without admin
 * rights. H2's file functions write outside the database, so read-only alone would not stop them.
 */
class ScopeReaderSqlOnH2Test extends ScopeReaderSqlContract {

  @TempDir Path dir;

  private String url() {
    // a file database: closed between the test's own connections, so the reader opens it
    return "jdbc:h2:file:" + dir.resolve("support").toAbsolutePath();
  }

  @Override
  SqlSource source() {
    return new SqlSource(url() + ";ACCESS_MODE_DATA=r", "reader", "reader");
  }

  @Override
  SqlSource owner() {
    return new SqlSource(url(), "sa", "");
  }

  @Override
  void grantRead() throws SQLException {
    execute("CREATE USER IF NOT EXISTS reader PASSWORD 'reader'");
    execute("GRANT SELECT ON accounts TO reader");
  }

  @Test
  void sqlScopeWithoutAConfiguredSourceIsRefused() {
    ScopeReader unconfigured = new ScopeReader(ScopeSettings.in(Path.of("")));

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                unconfigured.read(
                    new Scope.Sql("select account_id, cursor from accounts"),
                    CollectingSink.discarding()));

    assertEquals(
        "no scope SQL data source is configured (fencekeeper.scope-sql.url)", e.getMessage());
  }

  @Test
  void csvWriteAndFileWriteAreRefusedAndWriteNothing() throws SQLException {
    insertAccounts(2);
    Path csv = dir.resolve("stolen.csv");
    Path file = dir.resolve("written.txt");

    ScopeException csvWrite =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(
                        new Scope.Sql(
                            "select account_id, cursor from accounts where csvwrite('"
                                + csv
                                + "', 'select * from accounts') > 0"),
                        CollectingSink.discarding()));
    ScopeException fileWrite =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(
                        new Scope.Sql(
                            "select account_id, cursor from accounts where file_write('x', '"
                                + file
                                + "') > 0"),
                        CollectingSink.discarding()));

    assertTrue(csvWrite.getMessage().contains("needs admin rights"), csvWrite.getMessage());
    assertTrue(fileWrite.getMessage().contains("needs admin rights"), fileWrite.getMessage());
    assertFalse(Files.exists(csv));
    assertFalse(Files.exists(file));
    assertEquals(2, countAccounts());
  }

  @Test
  void aSourceNotOpenedReadOnlyIsRefusedBeforeTheQueryRuns() throws SQLException {
    insertAccounts(2);
    Path csv = dir.resolve("stolen.csv");
    ScopeReader writable = reader(new SqlSource(url(), "reader", "reader"));

    ScopeRefused e =
        assertThrows(
            ScopeRefused.class,
            () ->
                writable.read(
                    new Scope.Sql(
                        "select account_id, cursor from accounts where csvwrite('"
                            + csv
                            + "', 'select 1') > 0"),
                    CollectingSink.discarding()));

    assertTrue(e.getMessage().contains("ACCESS_MODE_DATA=r"), e.getMessage());
    assertFalse(Files.exists(csv));
  }

  @Test
  void anAdminUserIsRefusedEvenOnAReadOnlyDatabase() throws SQLException {
    insertAccounts(2);
    Path csv = dir.resolve("stolen.csv");
    ScopeReader admin = reader(new SqlSource(url() + ";ACCESS_MODE_DATA=r", "sa", ""));

    ScopeRefused e =
        assertThrows(
            ScopeRefused.class,
            () ->
                admin.read(
                    new Scope.Sql(
                        "select account_id, cursor from accounts where csvwrite('"
                            + csv
                            + "', 'select 1') > 0"),
                    CollectingSink.discarding()));

    assertTrue(e.getMessage().contains("admin rights"), e.getMessage());
    assertFalse(Files.exists(csv));
  }
}

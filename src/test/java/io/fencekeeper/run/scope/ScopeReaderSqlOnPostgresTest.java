package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ScopeReaderSqlOnPostgresTest extends ScopeReaderSqlContract {

  private static EmbeddedPostgres postgres;

  @BeforeAll
  static void startPostgres() throws IOException {
    postgres = EmbeddedPostgres.builder().start();
  }

  @AfterAll
  static void stopPostgres() throws IOException {
    postgres.close();
  }

  @Override
  SqlSource source() {
    return new SqlSource(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "");
  }

  @Test
  void aWriteHiddenInAFunctionCallIsStoppedByTheReadOnlyConnection() throws SQLException {
    insertAccounts(2);
    execute("CREATE SEQUENCE scope_probe");

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(
                        new Scope.Sql(
                            "select account_id, cursor, nextval('scope_probe') from accounts"),
                        b -> {}));

    assertTrue(e.getMessage().contains("read-only transaction"), e.getMessage());
    assertEquals(2, countAccounts());
  }

  @Test
  void slowQueryIsCutOffAtTheStatementTimeout() {
    ScopeReader impatient = new ScopeReader(Optional.of(source()), 1000, Duration.ofSeconds(1));

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                impatient.read(
                    new Scope.Sql("select 'a-1' as account_id, 'c-1' as cursor from pg_sleep(30)"),
                    b -> {}));

    assertEquals("scope SQL query did not finish within 1s", e.getMessage());
  }

  @Test
  void unreachableSourceIsNamed() {
    ScopeReader unreachable =
        new ScopeReader(
            Optional.of(new SqlSource("jdbc:postgresql://127.0.0.1:1/support", "u", "secret")));

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                unreachable.read(
                    new Scope.Sql("select account_id, cursor from accounts"), b -> {}));

    assertTrue(
        e.getMessage()
            .startsWith(
                "cannot connect to the scope SQL data source jdbc:postgresql://127.0.0.1:1/support: "),
        e.getMessage());
    assertTrue(!e.getMessage().contains("secret"));
  }
}

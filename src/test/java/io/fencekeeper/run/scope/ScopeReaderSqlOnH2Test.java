package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ScopeReaderSqlOnH2Test extends ScopeReaderSqlContract {

  private static final AtomicInteger DATABASES = new AtomicInteger();

  private final SqlSource source =
      new SqlSource(
          "jdbc:h2:mem:scope-" + DATABASES.incrementAndGet() + ";DB_CLOSE_DELAY=-1", "sa", "");

  @Override
  SqlSource source() {
    return source;
  }

  @Test
  void sqlScopeWithoutAConfiguredSourceIsRefused() {
    ScopeReader unconfigured = new ScopeReader(Optional.empty());

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                unconfigured.read(
                    new Scope.Sql("select account_id, cursor from accounts"), b -> {}));

    assertEquals(
        "no scope SQL data source is configured (fencekeeper.scope-sql.url)", e.getMessage());
  }
}

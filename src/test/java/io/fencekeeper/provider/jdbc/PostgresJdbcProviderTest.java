package io.fencekeeper.provider.jdbc;

import io.fencekeeper.localdb.PostgresBinaries;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/** The jdbc provider's contract on a real PostgreSQL server, started once for the class. */
class PostgresJdbcProviderTest extends JdbcProviderContract {

  private EmbeddedPostgres postgres;

  @Override
  String startDatabase() throws Exception {
    postgres = PostgresBinaries.builder().start();
    return postgres.getJdbcUrl("postgres", "postgres");
  }

  @Override
  String user() {
    return "postgres";
  }

  @Override
  String password() {
    return null;
  }

  @Override
  void stopDatabase() throws Exception {
    if (postgres != null) {
      postgres.close();
    }
  }
}

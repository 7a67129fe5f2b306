package io.fencekeeper.provider.jdbc;

/** The jdbc provider's contract on H2, the embedded default database. */
class H2JdbcProviderTest extends JdbcProviderContract {

  @Override
  String startDatabase() {
    // DB_CLOSE_DELAY keeps the in-memory database alive between connections
    return "jdbc:h2:mem:jdbc-provider-test;DB_CLOSE_DELAY=-1";
  }

  @Override
  String user() {
    return "sa";
  }

  @Override
  String password() {
    return "";
  }

  @Override
  void stopDatabase() {}
}

package io.fencekeeper.provider.jdbc;

/**
 * Where and how the jdbc provider applies effects.
 *
 * @param url JDBC URL of the target database (PostgreSQL or H2)
 * @param effectSql the cleanup statement, with named parameters (see {@link NamedSql}); null or
 *     blank records the fenced effect without running any statement of its own
 * @param planSql a read query answering one row with an {@code amount_minor} column (and optionally
 *     {@code action}, {@code description}); no row or amount 0 means nothing to do. Null or blank:
 *     every item has exactly one action
 * @param threads connections and threads for blocking JDBC work
 * @param queueCapacity calls waiting for a thread; beyond it a call is refused as throttled
 */
public record JdbcProviderSettings(
    String url,
    String user,
    String password,
    String effectSql,
    String planSql,
    int threads,
    int queueCapacity) {

  public JdbcProviderSettings {
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException("jdbc provider url is required");
    }
    if (threads < 1) {
      throw new IllegalArgumentException("jdbc provider threads must be >= 1, got " + threads);
    }
    if (queueCapacity < 1) {
      throw new IllegalArgumentException(
          "jdbc provider queueCapacity must be >= 1, got " + queueCapacity);
    }
  }

  public static JdbcProviderSettings of(String url, String user, String password) {
    return new JdbcProviderSettings(url, user, password, null, null, 4, 1024);
  }

  public JdbcProviderSettings withEffectSql(String effectSql) {
    return new JdbcProviderSettings(
        url, user, password, effectSql, planSql, threads, queueCapacity);
  }

  public JdbcProviderSettings withPlanSql(String planSql) {
    return new JdbcProviderSettings(
        url, user, password, effectSql, planSql, threads, queueCapacity);
  }

  public JdbcProviderSettings withThreads(int threads, int queueCapacity) {
    return new JdbcProviderSettings(
        url, user, password, effectSql, planSql, threads, queueCapacity);
  }

  @Override
  public String toString() {
    // never print the password into a log line
    return "JdbcProviderSettings[url=" + url + ", user=" + user + ", threads=" + threads + "]";
  }
}

package io.fencekeeper.provider.jdbc;

import io.fencekeeper.provider.Plan;

/**
 * Where and how the jdbc provider applies effects.
 *
 * @param url JDBC URL of the target database (PostgreSQL or H2)
 * @param effectSql the cleanup statement, with named parameters (see {@link NamedSql}); null or
 *     blank records the fenced effect without running any statement of its own
 * @param planSql a read query answering one row with an {@code amount_minor} column (and optionally
 *     {@code action}, {@code description}, {@code currency}); no row or amount 0 means nothing to
 *     do. Null or blank: every item has exactly one action
 * @param threads connections and threads for blocking JDBC work
 * @param queueCapacity calls waiting for a thread; beyond it a call is refused as throttled
 * @param currency the plan's currency when the plan query answers none (or there is no plan query):
 *     an ISO 4217 code of three upper-case letters; null or blank for none, and then {@code
 *     :currency} binds NULL (an effect statement that names it needs a plan query or this)
 */
public record JdbcProviderSettings(
    String url,
    String user,
    String password,
    String effectSql,
    String planSql,
    int threads,
    int queueCapacity,
    String currency) {

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
    currency = currency == null || currency.isBlank() ? null : currency.trim();
    if (currency != null && !Plan.isCurrency(currency)) {
      throw new IllegalArgumentException(
          "jdbc provider currency must be an ISO 4217 code of three upper-case letters (EUR),"
              + " got '"
              + (currency.length() > 20 ? currency.substring(0, 20) + "..." : currency)
              + "'");
    }
  }

  /**
   * These settings, once what they say together makes sense: an effect statement that names {@code
   * :currency} needs a plan query (which may answer one) or a currency of its own, or every item
   * would bind NULL, surely a configuration mistake, refused before any night.
   */
  public JdbcProviderSettings validated() {
    if (currency == null
        && (planSql == null || planSql.isBlank())
        && effectSql != null
        && !effectSql.isBlank()
        && NamedSql.parse(effectSql).parameters().contains("currency")) {
      throw new IllegalArgumentException(
          "the jdbc provider's effect-sql names :currency, but there is no plan-sql to answer one"
              + " and no jdbc.currency is set");
    }
    return this;
  }

  public static JdbcProviderSettings of(String url, String user, String password) {
    return new JdbcProviderSettings(url, user, password, null, null, 4, 1024, null);
  }

  public JdbcProviderSettings withEffectSql(String effectSql) {
    return new JdbcProviderSettings(
        url, user, password, effectSql, planSql, threads, queueCapacity, currency);
  }

  public JdbcProviderSettings withPlanSql(String planSql) {
    return new JdbcProviderSettings(
        url, user, password, effectSql, planSql, threads, queueCapacity, currency);
  }

  public JdbcProviderSettings withThreads(int threads, int queueCapacity) {
    return new JdbcProviderSettings(
        url, user, password, effectSql, planSql, threads, queueCapacity, currency);
  }

  public JdbcProviderSettings withCurrency(String currency) {
    return new JdbcProviderSettings(
        url, user, password, effectSql, planSql, threads, queueCapacity, currency);
  }

  @Override
  public String toString() {
    // never print the password into a log line
    return "JdbcProviderSettings[url=" + url + ", user=" + user + ", threads=" + threads + "]";
  }
}

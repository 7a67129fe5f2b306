package io.fencekeeper.provider.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;

/**
 * The SQL of the fence and the effect record, one place per database. The fence is a single
 * conditional write, never read-then-write: two stale-and-fresh writers racing cannot both pass.
 */
enum FenceDialect {
  POSTGRES(
      "INSERT INTO fencekeeper_fence (item_id, token) VALUES (?, ?)"
          + " ON CONFLICT (item_id) DO UPDATE SET token = EXCLUDED.token"
          + " WHERE fencekeeper_fence.token <= EXCLUDED.token"),
  H2(
      "MERGE INTO fencekeeper_fence t"
          + " USING (VALUES (CAST(? AS VARCHAR), CAST(? AS BIGINT))) s (item_id, token)"
          + " ON t.item_id = s.item_id"
          + " WHEN MATCHED AND t.token <= s.token THEN UPDATE SET token = s.token"
          + " WHEN NOT MATCHED THEN INSERT (item_id, token) VALUES (s.item_id, s.token)");

  static final List<String> CREATE_TABLES =
      List.of(
          "CREATE TABLE IF NOT EXISTS fencekeeper_fence ("
              + " item_id VARCHAR PRIMARY KEY,"
              + " token BIGINT NOT NULL)",
          "CREATE TABLE IF NOT EXISTS fencekeeper_effect ("
              + " idempotency_key VARCHAR PRIMARY KEY,"
              + " item_id VARCHAR NOT NULL,"
              + " effect_id VARCHAR NOT NULL,"
              + " fencing_token BIGINT NOT NULL,"
              + " applied_at TIMESTAMP WITH TIME ZONE NOT NULL)");

  /** Parameters: item id, token. One row changed: the token is current. Zero rows: stale. */
  final String advanceFence;

  static final String CURRENT_TOKEN = "SELECT token FROM fencekeeper_fence WHERE item_id = ?";

  static final String FIND_EFFECT =
      "SELECT item_id, effect_id, applied_at FROM fencekeeper_effect WHERE idempotency_key = ?";

  static final String RECORD_EFFECT =
      "INSERT INTO fencekeeper_effect"
          + " (idempotency_key, item_id, effect_id, fencing_token, applied_at)"
          + " VALUES (?, ?, ?, ?, ?)";

  FenceDialect(String advanceFence) {
    this.advanceFence = advanceFence;
  }

  static FenceDialect of(Connection connection) throws SQLException {
    String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
    if (product.contains("postgres")) {
      return POSTGRES;
    }
    if (product.contains("h2")) {
      return H2;
    }
    throw new SQLException("the jdbc provider supports PostgreSQL and H2, not " + product, "0A000");
  }
}

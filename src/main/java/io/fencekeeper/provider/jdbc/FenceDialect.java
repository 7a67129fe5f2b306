package io.fencekeeper.provider.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
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

  /**
   * The fence and the effect record. {@code action}, {@code amount_minor} and {@code currency} are
   * the effect's identity (docs/provider-protocol.md, "The effect's identity"), added after the
   * first version: a table made before gets them by {@link #ADD_IDENTITY_COLUMNS}, and its rows,
   * without them, are compared on their item alone.
   */
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
              + " applied_at TIMESTAMP WITH TIME ZONE NOT NULL,"
              + " action VARCHAR,"
              + " amount_minor BIGINT,"
              + " currency VARCHAR(3))");

  static final List<String> ADD_IDENTITY_COLUMNS =
      List.of(
          "ALTER TABLE fencekeeper_effect ADD COLUMN IF NOT EXISTS action VARCHAR",
          "ALTER TABLE fencekeeper_effect ADD COLUMN IF NOT EXISTS amount_minor BIGINT",
          "ALTER TABLE fencekeeper_effect ADD COLUMN IF NOT EXISTS currency VARCHAR(3)");

  /** Parameters: item id, token. One row changed: the token is current. Zero rows: stale. */
  final String advanceFence;

  static final String CURRENT_TOKEN = "SELECT token FROM fencekeeper_fence WHERE item_id = ?";

  static final String FIND_EFFECT =
      "SELECT item_id, effect_id, applied_at, action, amount_minor, currency"
          + " FROM fencekeeper_effect WHERE idempotency_key = ?";

  static final String RECORD_EFFECT =
      "INSERT INTO fencekeeper_effect"
          + " (idempotency_key, item_id, effect_id, fencing_token, applied_at, action,"
          + " amount_minor, currency)"
          + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

  static final String EFFECT_SAVEPOINT = "fencekeeper_effect";

  FenceDialect(String advanceFence) {
    this.advanceFence = advanceFence;
  }

  /**
   * Whose clock decides a cleanup's deadline: the target database's, read as the transaction goes
   * ({@code clock_timestamp()}, not {@code now()}, which is the transaction's start). H2 has no
   * such clock (its {@code CURRENT_TIMESTAMP} stays put within a transaction), and runs in the
   * node's JVM or next to it: the node's clock.
   */
  Instant now(Connection connection) throws SQLException {
    if (this == H2) {
      return Instant.now();
    }
    try (Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery("SELECT clock_timestamp()")) {
      row.next();
      return row.getObject(1, OffsetDateTime.class).toInstant();
    }
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

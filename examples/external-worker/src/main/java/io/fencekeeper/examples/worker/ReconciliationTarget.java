package io.fencekeeper.examples.worker;

import io.fencekeeper.sdk.worker.Item;
import io.fencekeeper.sdk.worker.Lease;
import io.fencekeeper.sdk.worker.LeaseLostException;
import io.fencekeeper.sdk.worker.Outcome;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

/**
 * The target's side of the contract (docs/external-workers.md, "The target's side";
 * docs/provider-protocol.md, "Fencing semantics" and "Retry semantics"), in one PostgreSQL
 * transaction per cleanup:
 *
 * <ol>
 *   <li>the fence: the highest token seen for the item, row-locked; a lower token is refused
 *       before anything is written (a holder whose lease was taken over is stale);
 *   <li>the key: an effect already recorded under the item's idempotency key is answered, never
 *       applied again (a repeat after a lost answer, or a takeover that did not know);
 *   <li>the cleanup itself (a duplicate capture voided on the account's balance) and its effect
 *       row, committed together.
 * </ol>
 *
 * A commit whose answer is lost may have happened: it is thrown, and the worker client marks the
 * item ambiguous; the next holder's lookup reads the effect row.
 */
public final class ReconciliationTarget {

  /** What a duplicate capture costs the account, voided once per item. */
  static final long DUPLICATE_CAPTURE_MINOR = 1_000;

  private final String url;
  private final String user;
  private final String password;

  public ReconciliationTarget(String url, String user, String password) {
    this.url = url;
    this.user = user;
    this.password = password;
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(url, user, password);
  }

  /** Creates the tables if they are not there. */
  public void createTables() throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS account_balance (account_id VARCHAR(128) PRIMARY KEY,"
              + " balance_minor BIGINT NOT NULL)");
      s.execute(
          "CREATE TABLE IF NOT EXISTS cleanup_fence (item_id VARCHAR(1000) PRIMARY KEY,"
              + " token BIGINT NOT NULL)");
      s.execute(
          "CREATE TABLE IF NOT EXISTS cleanup_effect (idempotency_key VARCHAR(100) PRIMARY KEY,"
              + " item_id VARCHAR(1000) NOT NULL, account_id VARCHAR(128) NOT NULL,"
              + " amount_minor BIGINT NOT NULL, fencing_token BIGINT NOT NULL,"
              + " effect_id VARCHAR(64) NOT NULL, applied_at TIMESTAMP WITH TIME ZONE NOT NULL)");
    }
  }

  /** The cleanup of {@code item} under {@code lease}, fenced by its token, once per its key. */
  public Outcome apply(Item item, Lease lease, Duration margin) throws SQLException, LeaseLostException {
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      try {
        if (!fence(c, item.itemId(), lease.fencingToken())) {
          c.rollback();
          // a newer holder's token is at the target: this lease is over, and nothing was written
          return new Outcome.Failed("fenced off: a newer token is at the target", true, null);
        }
        Optional<String> earlier = effectOf(c, item.idempotencyKey());
        if (earlier.isPresent()) {
          c.commit(); // the fence moved up; the effect stays the one it was
          return Outcome.found(earlier.get());
        }
        lease.ensureLive(margin); // no write the lease may not outlive
        String effectId = UUID.randomUUID().toString();
        debit(c, item.accountId(), DUPLICATE_CAPTURE_MINOR);
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO cleanup_effect (idempotency_key, item_id, account_id, amount_minor,"
                    + " fencing_token, effect_id, applied_at) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
          ps.setString(1, item.idempotencyKey());
          ps.setString(2, item.itemId());
          ps.setString(3, item.accountId());
          ps.setLong(4, DUPLICATE_CAPTURE_MINOR);
          ps.setLong(5, lease.fencingToken());
          ps.setString(6, effectId);
          ps.setTimestamp(7, Timestamp.from(Instant.now()));
          ps.executeUpdate();
        }
        c.commit(); // a failure here may have committed: thrown, so the item becomes ambiguous
        return Outcome.applied(effectId);
      } catch (SQLException | LeaseLostException | RuntimeException e) {
        rollbackQuietly(c);
        throw e;
      }
    }
  }

  /** Whether the cleanup under {@code key} is at the target: the effect row exists exactly then. */
  public Optional<Outcome> lookup(String key) throws SQLException {
    try (Connection c = connect()) {
      return effectOf(c, key).map(Outcome::found);
    }
  }

  /**
   * Moves the item's fence up to {@code token}, holding its row lock until the transaction ends;
   * false if a higher token was seen (stale). A concurrent first insert of the fence row is a
   * serialization failure, thrown: the worker marks the item ambiguous and the next holder looks
   * it up.
   */
  private static boolean fence(Connection c, String itemId, long token) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT token FROM cleanup_fence WHERE item_id = ? FOR UPDATE")) {
      ps.setString(1, itemId);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          if (rs.getLong(1) > token) {
            return false;
          }
          try (PreparedStatement up =
              c.prepareStatement("UPDATE cleanup_fence SET token = ? WHERE item_id = ?")) {
            up.setLong(1, token);
            up.setString(2, itemId);
            up.executeUpdate();
          }
          return true;
        }
      }
    }
    try (PreparedStatement ins =
        c.prepareStatement("INSERT INTO cleanup_fence (item_id, token) VALUES (?, ?)")) {
      ins.setString(1, itemId);
      ins.setLong(2, token);
      ins.executeUpdate();
    }
    return true;
  }

  private static Optional<String> effectOf(Connection c, String key) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT effect_id FROM cleanup_effect WHERE idempotency_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
      }
    }
  }

  private static void debit(Connection c, String accountId, long amount) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE account_balance SET balance_minor = balance_minor - ? WHERE account_id = ?")) {
      ps.setLong(1, amount);
      ps.setString(2, accountId);
      if (ps.executeUpdate() == 1) {
        return;
      }
    }
    try (PreparedStatement ins =
        c.prepareStatement(
            "INSERT INTO account_balance (account_id, balance_minor) VALUES (?, ?)")) {
      ins.setString(1, accountId);
      ins.setLong(2, -amount);
      ins.executeUpdate();
    }
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException ignored) {
      // the connection is closed next; the transaction ends with it
    }
  }
}

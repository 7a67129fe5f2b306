package com.example.cleanup;

import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.ProviderContext;
import io.fencekeeper.sdk.provider.ProviderFailure;
import io.fencekeeper.sdk.provider.Receipt;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A cleanup provider that writes off residual balances in a PostgreSQL database of its own, with
 * its own idempotency: the example of docs/writing-a-provider.md.
 *
 * <ul>
 *   <li>The plan: an account's row in {@code account_residual} with a non-zero amount is a {@code
 *       write-off-residual} of that amount in its currency; no row, or zero, is nothing to do.
 *   <li>The effect: a row in {@code cleanup_effect} (the write-off's ledger line) and the residual
 *       reduced by its amount, in one transaction. Its key column, {@code idempotency_key}, is
 *       the primary key: one effect per key, whatever happens.
 *   <li>Fencing, per key: {@code cleanup_fence} keeps the highest token seen under each key. The
 *       mark is raised in a transaction of its own, so it stays raised when the cleanup then fails
 *       (protocol 1.1's rule); the effect's transaction locks that row ({@code FOR UPDATE NOWAIT}:
 *       a second request with the key in flight is {@code KeyInUse}, not a wait) and re-reads the
 *       mark, so a newer claim that came in between wins.
 *   <li>The deadline, checked inside the effect's transaction by the database's clock: no
 *       statement may run past it ({@code statement_timeout}), and the last check comes just
 *       before the commit. A cleanup past its deadline commits nothing ({@code DeadlinePassed}).
 *   <li>A commit whose answer is lost is rethrown as it is (not a {@link ProviderFailure}): nobody
 *       knows whether it committed, so Fencekeeper looks the key up after the deadline, and {@link
 *       #lookup} reads {@code cleanup_effect}, which has the row exactly when the effect committed.
 * </ul>
 *
 * Settings ({@code fencekeeper.providers.<name>.settings}): {@code url} (a {@code
 * jdbc:postgresql:} URL, required), {@code user}, {@code password}, {@code max-connections}
 * (default 8).
 */
public final class PostgresCleanupProvider implements CleanupProvider {

  static final String ACTION = "write-off-residual";

  /** The tables, created if missing; account_residual is the operator's to fill. */
  static final String[] SCHEMA = {
    "CREATE TABLE IF NOT EXISTS account_residual (account_id VARCHAR(128) PRIMARY KEY,"
        + " amount_minor BIGINT NOT NULL, currency CHAR(3) NOT NULL)",
    "CREATE TABLE IF NOT EXISTS cleanup_fence (idempotency_key VARCHAR(255) PRIMARY KEY,"
        + " highest_token BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS cleanup_effect (idempotency_key VARCHAR(255) PRIMARY KEY,"
        + " effect_id VARCHAR(64) NOT NULL UNIQUE, item_id VARCHAR(600) NOT NULL,"
        + " account_id VARCHAR(128) NOT NULL, action VARCHAR(128) NOT NULL,"
        + " amount_minor BIGINT NOT NULL, currency CHAR(3), fencing_token BIGINT NOT NULL,"
        + " applied_at TIMESTAMPTZ NOT NULL)"
  };

  /** Raises the key's mark to the token, or leaves it (and changes nothing) when it is higher. */
  static final String RAISE_FENCE =
      "INSERT INTO cleanup_fence (idempotency_key, highest_token) VALUES (?, ?)"
          + " ON CONFLICT (idempotency_key) DO UPDATE SET highest_token = EXCLUDED.highest_token"
          + " WHERE cleanup_fence.highest_token <= EXCLUDED.highest_token";

  private final Connections connections;

  public PostgresCleanupProvider(ProviderContext context) {
    PGSimpleDataSource source = new PGSimpleDataSource();
    source.setURL(context.required("url"));
    source.setUser(context.setting("user", ""));
    source.setPassword(context.setting("password", ""));
    int max;
    try {
      max = Integer.parseInt(context.setting("max-connections", "8"));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("provider " + context.name() + ": max-connections");
    }
    this.connections = new Connections(source, max);
    createTables();
  }

  @Override
  public Guarantees guarantees() {
    return Guarantees.ALL;
  }

  @Override
  public Plan plan(Item item) {
    return connections.read(
        connection -> {
          try (PreparedStatement residual =
              connection.prepareStatement(
                  "SELECT amount_minor, currency FROM account_residual WHERE account_id = ?")) {
            residual.setString(1, item.accountId());
            try (ResultSet row = residual.executeQuery()) {
              if (!row.next() || row.getLong(1) == 0) {
                return Plan.nothing(item.accountId() + " has no residual");
              }
              long amount = row.getLong(1);
              String currency = row.getString(2);
              return Plan.action(
                  ACTION,
                  amount,
                  currency,
                  "write off the residual of " + amount + " " + currency + " on " + item.accountId());
            }
          }
        });
  }

  @Override
  public Receipt apply(Cleanup cleanup) {
    String key = cleanup.idempotencyKey();
    long token = cleanup.fencingToken();
    // 1. the fence, in a transaction of its own: the mark stays raised whatever happens next
    connections.write(
        connection -> {
          try (PreparedStatement raise = connection.prepareStatement(RAISE_FENCE)) {
            raise.setString(1, key);
            raise.setLong(2, token);
            if (raise.executeUpdate() == 0) {
              throw new ProviderFailure.StaleToken(token, highestToken(connection, key));
            }
          }
          connections.commit(connection);
          return null;
        });
    // 2. the effect, by the database's clock, before the deadline or not at all
    return connections.write(connection -> applyBefore(connection, cleanup));
  }

  private Receipt applyBefore(Connection connection, Cleanup cleanup) throws SQLException {
    String key = cleanup.idempotencyKey();
    long left = Duration.between(Instant.now(), cleanup.deadline()).toMillis();
    try (Statement bound = connection.createStatement()) {
      // no statement of this transaction may run past the deadline (a rough bound: the clocks of
      // this process and the database; the checks below are the database's)
      bound.execute("SET LOCAL statement_timeout = " + Math.max(1, left));
    }
    try (PreparedStatement lock =
        connection.prepareStatement(
            "SELECT highest_token FROM cleanup_fence WHERE idempotency_key = ?"
                + " FOR UPDATE NOWAIT")) {
      lock.setString(1, key);
      try (ResultSet row = lock.executeQuery()) {
        row.next();
        long highest = row.getLong(1);
        if (highest > cleanup.fencingToken()) {
          throw new ProviderFailure.StaleToken(cleanup.fencingToken(), highest);
        }
      }
    }
    Optional<Stored> stored = stored(connection, key);
    if (stored.isPresent()) {
      if (!stored.get().sameEffect(cleanup)) {
        throw new ProviderFailure.KeyReused("key " + key + " holds another write-off");
      }
      return Receipt.replayed(stored.get().effectId(), stored.get().appliedAt());
    }
    requireBeforeDeadline(connection, cleanup);
    Plan plan = cleanup.plan();
    try (PreparedStatement writeOff =
        connection.prepareStatement(
            "UPDATE account_residual SET amount_minor = amount_minor - ?"
                + " WHERE account_id = ? AND amount_minor >= ?")) {
      writeOff.setLong(1, plan.amountMinor());
      writeOff.setString(2, cleanup.item().accountId());
      writeOff.setLong(3, plan.amountMinor());
      if (writeOff.executeUpdate() != 1) {
        throw new ProviderFailure.Transient(
            "the residual of " + cleanup.item().accountId() + " changed since the plan: plan again");
      }
    }
    String effectId = "wo-" + UUID.randomUUID();
    Instant appliedAt = Instant.now().truncatedTo(ChronoUnit.MICROS);
    try (PreparedStatement line =
        connection.prepareStatement(
            "INSERT INTO cleanup_effect (idempotency_key, effect_id, item_id, account_id, action,"
                + " amount_minor, currency, fencing_token, applied_at)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      line.setString(1, key);
      line.setString(2, effectId);
      line.setString(3, cleanup.item().value());
      line.setString(4, cleanup.item().accountId());
      line.setString(5, plan.action());
      line.setLong(6, plan.amountMinor());
      line.setString(7, plan.currency());
      line.setLong(8, cleanup.fencingToken());
      line.setObject(9, OffsetDateTime.ofInstant(appliedAt, ZoneOffset.UTC));
      line.executeUpdate();
    }
    requireBeforeDeadline(connection, cleanup);
    connections.commit(connection);
    return Receipt.applied(effectId, appliedAt);
  }

  @Override
  public Optional<Receipt> lookup(Item item, String idempotencyKey) {
    return connections.read(
        connection ->
            stored(connection, idempotencyKey)
                .map(found -> Receipt.applied(found.effectId(), found.appliedAt())));
  }

  @Override
  public void close() {
    connections.close();
  }

  /** The database's clock before the deadline, or the transaction ends with nothing applied. */
  private static void requireBeforeDeadline(Connection connection, Cleanup cleanup)
      throws SQLException {
    try (PreparedStatement now = connection.prepareStatement("SELECT clock_timestamp() < ?")) {
      now.setObject(1, OffsetDateTime.ofInstant(cleanup.deadline(), ZoneOffset.UTC));
      try (ResultSet row = now.executeQuery()) {
        row.next();
        if (!row.getBoolean(1)) {
          throw new ProviderFailure.DeadlinePassed(
              "the deadline " + cleanup.deadline() + " passed before the write-off could commit");
        }
      }
    }
  }

  private static long highestToken(Connection connection, String key) throws SQLException {
    try (PreparedStatement read =
        connection.prepareStatement(
            "SELECT highest_token FROM cleanup_fence WHERE idempotency_key = ?")) {
      read.setString(1, key);
      try (ResultSet row = read.executeQuery()) {
        return row.next() ? row.getLong(1) : -1;
      }
    }
  }

  /** The effect committed under a key: the write-off's line. */
  private record Stored(
      String effectId,
      Instant appliedAt,
      String itemId,
      String action,
      long amountMinor,
      String currency) {

    /** Protocol 1.1's identity: item, action, amount, and the currency when both carry one. */
    boolean sameEffect(Cleanup cleanup) {
      Plan plan = cleanup.plan();
      return itemId.equals(cleanup.item().value())
          && action.equals(plan.action())
          && amountMinor == plan.amountMinor()
          && (currency == null || plan.currency() == null || currency.equals(plan.currency()));
    }
  }

  private static Optional<Stored> stored(Connection connection, String key) throws SQLException {
    try (PreparedStatement read =
        connection.prepareStatement(
            "SELECT effect_id, applied_at, item_id, action, amount_minor, currency"
                + " FROM cleanup_effect WHERE idempotency_key = ?")) {
      read.setString(1, key);
      try (ResultSet row = read.executeQuery()) {
        if (!row.next()) {
          return Optional.empty();
        }
        return Optional.of(
            new Stored(
                row.getString(1),
                row.getObject(2, OffsetDateTime.class).toInstant(),
                row.getString(3),
                row.getString(4),
                row.getLong(5),
                row.getString(6)));
      }
    }
  }

  /**
   * The tables, once per node start: several nodes may start at once, and PostgreSQL's {@code
   * CREATE TABLE IF NOT EXISTS} can still fail for one of two racing creators, which tries again.
   */
  private void createTables() {
    for (int attempt = 1; ; attempt++) {
      try {
        connections.write(
            connection -> {
              try (Statement ddl = connection.createStatement()) {
                for (String table : SCHEMA) {
                  ddl.execute(table);
                }
              }
              connections.commit(connection);
              return null;
            });
        return;
      } catch (ProviderFailure e) {
        if (attempt == 3) {
          throw new IllegalStateException("cannot create the provider's tables: " + e.getMessage());
        }
      }
    }
  }

  /**
   * A few connections, each used by one call at a time; a connection that failed is closed, not
   * reused. Every transaction is rolled back unless the work committed it.
   */
  static final class Connections {

    /** One unit of work on a connection in a transaction. */
    interface Work<T> {
      T run(Connection connection) throws SQLException;
    }

    private final PGSimpleDataSource source;
    private final java.util.concurrent.BlockingQueue<Connection> idle;
    private final java.util.concurrent.Semaphore open;

    Connections(PGSimpleDataSource source, int max) {
      this.source = Objects.requireNonNull(source);
      this.idle = new java.util.concurrent.LinkedBlockingQueue<>();
      this.open = new java.util.concurrent.Semaphore(Math.max(1, max));
    }

    <T> T read(Work<T> work) {
      return write(
          connection -> {
            T result = work.run(connection);
            connection.commit();
            return result;
          });
    }

    /** The work in a transaction; its own commit is the work's (a read commits nothing). */
    <T> T write(Work<T> work) {
      Connection connection = borrow();
      boolean healthy = false;
      try {
        T result = work.run(connection);
        healthy = true;
        return result;
      } catch (ProviderFailure refused) {
        healthy = true;
        throw refused;
      } catch (SQLException e) {
        throw classify(e);
      } finally {
        giveBack(connection, healthy);
      }
    }

    /** A commit whose failure leaves the outcome unknown: rethrown as it is, not as a failure. */
    void commit(Connection connection) throws SQLException {
      try {
        connection.commit();
      } catch (SQLException lost) {
        throw new IllegalStateException("the commit's answer was lost: " + lost.getMessage(), lost);
      }
    }

    private Connection borrow() {
      Connection connection = idle.poll();
      if (connection != null) {
        return connection;
      }
      try {
        if (!open.tryAcquire(1, java.util.concurrent.TimeUnit.SECONDS)) {
          throw new ProviderFailure.Throttled(
              Duration.ofMillis(200), "every connection to the ledger is busy");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ProviderFailure.Transient("interrupted while waiting for a connection");
      }
      try {
        connection = source.getConnection();
        connection.setAutoCommit(false);
        return connection;
      } catch (SQLException e) {
        open.release();
        throw new ProviderFailure.Transient("cannot connect to the ledger: " + e.getMessage(), e);
      }
    }

    private void giveBack(Connection connection, boolean healthy) {
      try {
        connection.rollback(); // whatever the work did not commit
        if (healthy) {
          idle.add(connection);
          return;
        }
      } catch (SQLException broken) {
        // closed below
      }
      try {
        connection.close();
      } catch (SQLException ignored) {
        // it is gone either way
      }
      open.release();
    }

    /** Everything failed before the commit rolls back: nothing was applied. */
    private static ProviderFailure classify(SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      return switch (state) {
        case "55P03" -> new ProviderFailure.KeyInUse("another request with the key is in flight");
        case "57014" ->
            new ProviderFailure.DeadlinePassed("the deadline passed during the write-off");
        default -> new ProviderFailure.Transient("ledger error " + state + ": " + e.getMessage(), e);
      };
    }

    void close() {
      for (Connection connection = idle.poll(); connection != null; connection = idle.poll()) {
        try {
          connection.close();
        } catch (SQLException ignored) {
          // closing anyway
        }
      }
    }
  }
}

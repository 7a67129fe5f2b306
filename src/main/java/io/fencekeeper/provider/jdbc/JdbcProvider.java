package io.fencekeeper.provider.jdbc;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.EffectIdentity;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The transactional provider (docs/provider-protocol.md, "The jdbc provider"): the effect is a SQL
 * statement in the target database, committed in one transaction with the item's fence row and the
 * effect record. So the effect and the proof that it happened can only change together: a stale
 * token changes nothing, a repeated key with the same identity is a replay, a deadline that passed
 * commits no effect, and after an ambiguous commit {@code lookup} tells the truth. The fence rises
 * with every request that passes it, and stays raised when the effect then fails (the effect runs
 * after a savepoint, and only the savepoint is rolled back).
 *
 * <p>JDBC blocks, so all of it runs on a dedicated bounded pool; each pool thread keeps its own
 * connection.
 */
public final class JdbcProvider implements Provider {

  /** Opens a connection to the target database. */
  @FunctionalInterface
  public interface ConnectionSource {
    Connection open() throws SQLException;
  }

  private static final Duration QUEUE_FULL_RETRY_AFTER = Duration.ofMillis(100);

  private final ConnectionSource connections;
  private final FenceDialect dialect;
  private final NamedSql effectSql;
  private final NamedSql planSql;
  private final String currency;
  private final ThreadPoolExecutor executor;
  private final ThreadLocal<Connection> threadConnection = new ThreadLocal<>();
  private final Set<Connection> openConnections = ConcurrentHashMap.newKeySet();

  private JdbcProvider(
      ConnectionSource connections,
      FenceDialect dialect,
      NamedSql effectSql,
      NamedSql planSql,
      String currency,
      int threads,
      int queueCapacity) {
    this.connections = connections;
    this.dialect = dialect;
    this.effectSql = effectSql;
    this.planSql = planSql;
    this.currency = currency;
    AtomicInteger counter = new AtomicInteger();
    this.executor =
        new ThreadPoolExecutor(
            threads,
            threads,
            0,
            TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(queueCapacity),
            runnable -> {
              Thread thread =
                  new Thread(runnable, "fencekeeper-jdbc-provider-" + counter.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
  }

  /** Connects with {@link DriverManager}, creates the two tables if missing, and starts. */
  public static JdbcProvider start(JdbcProviderSettings settings) {
    return start(
        () -> DriverManager.getConnection(settings.url(), settings.user(), settings.password()),
        settings);
  }

  /**
   * As {@link #start(JdbcProviderSettings)}, with connections from the caller (a pool). Tables made
   * by an earlier version get the identity columns they lack.
   */
  public static JdbcProvider start(ConnectionSource connections, JdbcProviderSettings settings) {
    settings.validated();
    FenceDialect dialect;
    try (Connection connection = connections.open()) {
      dialect = FenceDialect.of(connection);
      try (Statement statement = connection.createStatement()) {
        for (String ddl : FenceDialect.CREATE_TABLES) {
          statement.execute(ddl);
        }
        for (String ddl : FenceDialect.ADD_IDENTITY_COLUMNS) {
          statement.execute(ddl);
        }
      }
      if (!connection.getAutoCommit()) {
        connection.commit();
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "jdbc provider cannot prepare its tables in " + settings.url() + ": " + e.getMessage(),
          e);
    }
    return new JdbcProvider(
        connections,
        dialect,
        blankToNull(settings.effectSql()),
        blankToNull(settings.planSql()),
        settings.currency(),
        settings.threads(),
        settings.queueCapacity());
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    return inTransaction(false, connection -> readPlan(connection, item));
  }

  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    return inTransaction(true, connection -> applyFenced(connection, cleanup));
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
    return inTransaction(
        false,
        connection ->
            findEffect(connection, idempotencyKey)
                .map(found -> found.outcome(idempotencyKey, Receipt.APPLIED)));
  }

  @Override
  public void close() {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
    for (Connection connection : openConnections) {
      closeQuietly(connection);
    }
    openConnections.clear();
  }

  private Plan readPlan(Connection connection, ItemId item) throws SQLException {
    if (planSql == null) {
      return Plan.action(
          "cleanup",
          0,
          currency,
          "configured cleanup statement for " + item.accountId() + " at " + item.cursor());
    }
    try (PreparedStatement statement = connection.prepareStatement(planSql.jdbcSql())) {
      planSql.bind(statement, parameters(item, null, null, 0));
      try (ResultSet row = statement.executeQuery()) {
        if (!row.next()) {
          return Plan.nothing("the plan query found nothing for " + item.accountId());
        }
        long amountMinor = row.getLong("amount_minor");
        if (amountMinor == 0) {
          return Plan.nothing("the plan query found nothing to clean up for " + item.accountId());
        }
        String action = optionalColumn(row, "action").orElse("cleanup");
        String description =
            optionalColumn(row, "description")
                .orElse(action + " of " + amountMinor + " minor units on " + item.accountId());
        String planned = optionalColumn(row, "currency").map(String::trim).orElse(currency);
        if (planned != null && !Plan.isCurrency(planned)) {
          // the row's value stays out of the message: it is the target database's data
          throw new ProviderException(
              new ProviderError.Permanent(
                  "the plan query's currency column is not an ISO 4217 code of three upper-case"
                      + " letters for "
                      + item.accountId()));
        }
        return Plan.action(action, amountMinor, planned, description);
      }
    }
  }

  /**
   * The order of docs/provider-protocol.md, "Order of checks", in one transaction: the fence (a
   * stale token is refused and changes nothing), the stored effect (the same identity replays, a
   * different one is refused), the deadline by the database's clock, then the effect after a
   * savepoint, the deadline again, and the commit. From the fence on, every refusal and every
   * failure of the effect still commits the raised fence: the mark stays, the effect does not.
   */
  private Receipt applyFenced(Connection connection, Cleanup cleanup) throws SQLException {
    ItemId item = cleanup.item();
    String idempotencyKey = cleanup.idempotencyKey();
    try (PreparedStatement fence = connection.prepareStatement(dialect.advanceFence)) {
      fence.setString(1, item.value());
      fence.setLong(2, cleanup.fencingToken());
      if (fence.executeUpdate() == 0) {
        // invariant: a stale token changes nothing, not even the fence
        long highest = currentToken(connection, item);
        connection.rollback();
        throw new ProviderException(new ProviderError.StaleToken(cleanup.fencingToken(), highest));
      }
    }
    // the fence row is now locked by this transaction, so no other apply of this item can
    // interleave between this read and the insert below
    Optional<StoredEffect> existing = findEffect(connection, idempotencyKey);
    if (existing.isPresent()) {
      Optional<String> reused = existing.get().reusedBy(cleanup);
      connection.commit();
      if (reused.isPresent()) {
        throw new ProviderException(
            new ProviderError.Permanent(
                "key_reused: idempotency key " + idempotencyKey + " " + reused.get()));
      }
      return existing.get().outcome(idempotencyKey, Receipt.REPLAYED);
    }
    refuseAfterDeadline(connection, cleanup);
    Savepoint beforeEffect = connection.setSavepoint(FenceDialect.EFFECT_SAVEPOINT);
    Instant appliedAt = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    String effectId = "jdbc-" + UUID.randomUUID();
    try {
      runEffect(connection, cleanup);
      recordEffect(connection, cleanup, effectId, appliedAt);
    } catch (SQLException effectFailed) {
      try {
        keepFenceOnly(connection, beforeEffect);
      } catch (SQLException alsoFailed) {
        effectFailed.addSuppressed(alsoFailed);
      }
      throw effectFailed;
    }
    if (!dialect.now(connection).isBefore(cleanup.deadline())) {
      keepFenceOnly(connection, beforeEffect);
      throw deadlinePassed(cleanup);
    }
    try {
      connection.commit();
    } catch (SQLException e) {
      // the database may have committed before the failure reached us: only lookup can tell
      throw new ProviderException(
          new ProviderError.Ambiguous("commit of the effect failed: " + e.getMessage()), e);
    }
    return new Receipt(idempotencyKey, effectId, Receipt.APPLIED, appliedAt);
  }

  /**
   * deadline_passed unless the database's clock is still before the cleanup's deadline: checked
   * before the effect and again just before the commit. The raised fence is committed; the effect
   * is not (a Transient error: nothing was applied).
   */
  private void refuseAfterDeadline(Connection connection, Cleanup cleanup) throws SQLException {
    if (dialect.now(connection).isBefore(cleanup.deadline())) {
      return;
    }
    connection.commit();
    throw deadlinePassed(cleanup);
  }

  private static ProviderException deadlinePassed(Cleanup cleanup) {
    return new ProviderException(
        new ProviderError.Transient(
            "deadline_passed: the cleanup's deadline "
                + cleanup.deadline()
                + " passed by the database's clock before it could commit; nothing was applied"));
  }

  private void runEffect(Connection connection, Cleanup cleanup) throws SQLException {
    if (effectSql == null) {
      return;
    }
    try (PreparedStatement effect = connection.prepareStatement(effectSql.jdbcSql())) {
      effectSql.bind(
          effect,
          parameters(
              cleanup.item(), cleanup.plan(), cleanup.idempotencyKey(), cleanup.fencingToken()));
      effect.executeUpdate();
    }
  }

  private static void recordEffect(
      Connection connection, Cleanup cleanup, String effectId, Instant appliedAt)
      throws SQLException {
    try (PreparedStatement record = connection.prepareStatement(FenceDialect.RECORD_EFFECT)) {
      record.setString(1, cleanup.idempotencyKey());
      record.setString(2, cleanup.item().value());
      record.setString(3, effectId);
      record.setLong(4, cleanup.fencingToken());
      record.setObject(5, OffsetDateTime.ofInstant(appliedAt, ZoneOffset.UTC));
      record.setString(6, cleanup.plan().action());
      record.setLong(7, cleanup.plan().amountMinor());
      record.setString(8, cleanup.plan().currency());
      record.executeUpdate();
    }
  }

  /**
   * The effect failed (or came too late): roll back to before it and commit the raised fence. If
   * that fails, the caller's SQLException makes {@link #inTransaction} roll everything back and
   * close the connection, fence included: nothing durable, and nothing left for a later commit.
   */
  private static void keepFenceOnly(Connection connection, Savepoint beforeEffect)
      throws SQLException {
    connection.rollback(beforeEffect);
    connection.commit();
  }

  private static long currentToken(Connection connection, ItemId item) throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(FenceDialect.CURRENT_TOKEN)) {
      statement.setString(1, item.value());
      try (ResultSet row = statement.executeQuery()) {
        return row.next() ? row.getLong(1) : -1L;
      }
    }
  }

  private static Optional<StoredEffect> findEffect(Connection connection, String idempotencyKey)
      throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(FenceDialect.FIND_EFFECT)) {
      statement.setString(1, idempotencyKey);
      try (ResultSet row = statement.executeQuery()) {
        if (!row.next()) {
          return Optional.empty();
        }
        long amountMinor = row.getLong("amount_minor");
        return Optional.of(
            new StoredEffect(
                row.getString("item_id"),
                row.getString("effect_id"),
                row.getObject("applied_at", OffsetDateTime.class).toInstant(),
                row.getString("action"),
                row.wasNull() ? null : amountMinor,
                row.getString("currency")));
      }
    }
  }

  /**
   * An effect row. {@code action} and {@code amountMinor} are null in a row written before the
   * identity was kept: such a row is the same effect as any cleanup of its item.
   */
  private record StoredEffect(
      String itemId,
      String effectId,
      Instant appliedAt,
      String action,
      Long amountMinor,
      String currency) {

    Receipt outcome(String idempotencyKey, String status) {
      return new Receipt(idempotencyKey, effectId, status, appliedAt);
    }

    /**
     * Why {@code cleanup} is not this effect (docs/provider-protocol.md, "The effect's identity").
     */
    Optional<String> reusedBy(Cleanup cleanup) {
      if (!itemId.equals(cleanup.item().value())) {
        return Optional.of("was already used for item " + itemId);
      }
      if (action == null || amountMinor == null) {
        return Optional.empty();
      }
      EffectIdentity stored = new EffectIdentity(itemId, action, amountMinor, currency);
      EffectIdentity asked = EffectIdentity.of(cleanup);
      return asked.sameEffect(stored)
          ? Optional.empty()
          : Optional.of("was already applied with a different " + asked.differenceFrom(stored));
    }
  }

  private static Map<String, Object> parameters(
      ItemId item, Plan plan, String idempotencyKey, long fencingToken) {
    Map<String, Object> values = new HashMap<>();
    values.put("job", item.job());
    values.put("businessDate", item.businessDate());
    values.put("accountId", item.accountId());
    values.put("cursor", item.cursor());
    values.put("itemId", item.value());
    values.put("amountMinor", plan == null ? 0L : plan.amountMinor());
    values.put("currency", plan == null ? null : plan.currency());
    values.put("action", plan == null ? null : plan.action());
    values.put("idempotencyKey", idempotencyKey);
    values.put("fencingToken", fencingToken);
    return values;
  }

  @FunctionalInterface
  private interface Work<T> {
    T run(Connection connection) throws SQLException;
  }

  /**
   * Runs {@code work} in one transaction on a pool thread. Any failure rolls back; a failure that
   * is not already a typed provider error is classified from its SQLState.
   */
  private <T> CompletionStage<T> inTransaction(boolean mutation, Work<T> work) {
    try {
      return CompletableFuture.supplyAsync(
          () -> {
            Connection connection = null;
            try {
              connection = connection();
              T result = work.run(connection);
              if (!mutation) {
                connection.commit();
              }
              return result;
            } catch (ProviderException e) {
              if (e.error() instanceof ProviderError.Ambiguous) {
                discard(connection);
              }
              throw e;
            } catch (SQLException e) {
              discard(connection);
              throw new ProviderException(classify(e), e);
            } catch (RuntimeException e) {
              discard(connection);
              throw e;
            }
          },
          executor);
    } catch (RejectedExecutionException e) {
      // the bounded queue is full: tell the caller to back off, which the governor understands
      return CompletableFuture.failedFuture(
          new ProviderException(
              new ProviderError.Throttled(
                  QUEUE_FULL_RETRY_AFTER, "jdbc provider queue is full or closed"),
              e));
    }
  }

  /**
   * Failures before commit rolled the effect back (and the fence with it, unless the fence was
   * committed on its own after the effect's savepoint), so they are retryable or permanent, never
   * ambiguous; a failed commit is handled where it happens.
   */
  static ProviderError classify(SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    String sqlClass = state.length() >= 2 ? state.substring(0, 2) : "";
    if (state.equals("23505")) {
      // a concurrent apply of the same key or item committed first; a retry replays it
      return new ProviderError.Transient("concurrent apply of the same item: " + e.getMessage());
    }
    if (sqlClass.equals("22")
        || sqlClass.equals("23")
        || sqlClass.equals("42")
        || sqlClass.equals("0A")) {
      return new ProviderError.Permanent(
          "the database refused the cleanup (" + state + "): " + e.getMessage());
    }
    if (e instanceof SQLTransientException || e instanceof SQLRecoverableException) {
      return new ProviderError.Transient(e.getMessage());
    }
    return new ProviderError.Transient("database error (" + state + "): " + e.getMessage());
  }

  private Connection connection() throws SQLException {
    Connection connection = threadConnection.get();
    if (connection != null && !connection.isClosed()) {
      return connection;
    }
    connection = connections.open();
    connection.setAutoCommit(false);
    threadConnection.set(connection);
    openConnections.add(connection);
    return connection;
  }

  /** After an error the connection's state is unknown: roll back, close, and open anew later. */
  private void discard(Connection connection) {
    if (connection == null) {
      return;
    }
    try {
      connection.rollback();
    } catch (SQLException ignored) {
      // closing below ends the transaction anyway
    }
    closeQuietly(connection);
    openConnections.remove(connection);
    threadConnection.remove();
  }

  private static void closeQuietly(Connection connection) {
    try {
      connection.close();
    } catch (SQLException ignored) {
      // nothing left to release
    }
  }

  private static Optional<String> optionalColumn(ResultSet row, String column) {
    try {
      return Optional.ofNullable(row.getString(column));
    } catch (SQLException noSuchColumn) {
      return Optional.empty();
    }
  }

  private static NamedSql blankToNull(String sql) {
    return sql == null || sql.isBlank() ? null : NamedSql.parse(sql);
  }
}

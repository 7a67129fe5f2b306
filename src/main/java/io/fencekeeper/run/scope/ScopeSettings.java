package io.fencekeeper.run.scope;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What a node allows a run's scope to be.
 *
 * @param scopeDir the only directory CSV scopes are read from ({@code fencekeeper.scope-dir})
 * @param maxItemsPerRun a scope with more accounts is refused ({@code
 *     fencekeeper.max-items-per-run})
 * @param sqlSource where SQL scopes run, if anywhere ({@code fencekeeper.scope-sql})
 * @param sqlTimeout how long a SQL scope may take, enforced by the database ({@code
 *     fencekeeper.scope-sql.timeout})
 * @param batchSize accounts per staging batch
 */
public record ScopeSettings(
    Path scopeDir,
    long maxItemsPerRun,
    Optional<SqlSource> sqlSource,
    Duration sqlTimeout,
    int batchSize) {

  public static final long DEFAULT_MAX_ITEMS_PER_RUN = 5_000_000;
  public static final Duration DEFAULT_SQL_TIMEOUT = Duration.ofMinutes(5);
  public static final int DEFAULT_BATCH_SIZE = 1000;

  public ScopeSettings {
    Objects.requireNonNull(scopeDir, "scopeDir");
    Objects.requireNonNull(sqlSource, "sqlSource");
    if (maxItemsPerRun < 1 || maxItemsPerRun > Integer.MAX_VALUE) {
      // item sequence numbers are ints
      throw new IllegalArgumentException(
          "fencekeeper.max-items-per-run must be between 1 and "
              + Integer.MAX_VALUE
              + ", got "
              + maxItemsPerRun);
    }
    if (sqlTimeout.toMillis() < 1000) {
      throw new IllegalArgumentException(
          "fencekeeper.scope-sql.timeout must be at least 1s, got " + sqlTimeout);
    }
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1, got " + batchSize);
    }
  }

  /** Defaults around a scope directory: no SQL source, the default limits. */
  public static ScopeSettings in(Path scopeDir) {
    return new ScopeSettings(
        scopeDir, DEFAULT_MAX_ITEMS_PER_RUN, Optional.empty(), DEFAULT_SQL_TIMEOUT, 1000);
  }

  public ScopeSettings withSqlSource(SqlSource source) {
    return new ScopeSettings(scopeDir, maxItemsPerRun, Optional.of(source), sqlTimeout, batchSize);
  }

  public ScopeSettings withMaxItemsPerRun(long max) {
    return new ScopeSettings(scopeDir, max, sqlSource, sqlTimeout, batchSize);
  }

  public ScopeSettings withSqlTimeout(Duration timeout) {
    return new ScopeSettings(scopeDir, maxItemsPerRun, sqlSource, timeout, batchSize);
  }

  public ScopeSettings withBatchSize(int size) {
    return new ScopeSettings(scopeDir, maxItemsPerRun, sqlSource, sqlTimeout, size);
  }

  /** {@code fencekeeper.scope-dir}, {@code max-items-per-run} and {@code scope-sql}. */
  public static ScopeSettings fromConfig(Config config) {
    Config fk = config.getConfig("fencekeeper");
    Path dir =
        fk.hasPath("scope-dir") && !fk.getString("scope-dir").isBlank()
            ? Path.of(fk.getString("scope-dir"))
            : Path.of(fk.getString("data-dir")).resolve("scopes");
    long max =
        fk.hasPath("max-items-per-run")
            ? fk.getLong("max-items-per-run")
            : DEFAULT_MAX_ITEMS_PER_RUN;
    Duration timeout =
        fk.hasPath("scope-sql.timeout") ? fk.getDuration("scope-sql.timeout") : DEFAULT_SQL_TIMEOUT;
    return new ScopeSettings(dir, max, SqlSource.fromConfig(config), timeout, DEFAULT_BATCH_SIZE);
  }
}

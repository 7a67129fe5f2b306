package io.fencekeeper.run.scope;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Reads a run's scope as a stream of account batches, validating every account on the way, so a
 * million-account scope never sits in memory (only a fingerprint per account does, for duplicate
 * detection; see {@code AccountFingerprints}).
 *
 * <p>Batches are delivered while reading. A read that ends in a {@link ScopeException} has
 * delivered some batches already: the caller stages what it receives and discards all of it on the
 * exception; only a returned {@link ScopeSummary} means the scope is complete and valid. After the
 * first problem no further batch is delivered, but reading goes on so that the exception lists
 * every bad row (the first {@value AccountIntake#REPORTED_PROBLEMS} with their line, index or row
 * number, then a count of the rest).
 *
 * <p>Every source is held to the same rules: accountId and cursor are item id segments, an
 * account+cursor pair appears once, and a scope has at least one account.
 */
public final class ScopeReader {

  public static final int DEFAULT_BATCH_SIZE = 1000;
  public static final Duration DEFAULT_SQL_TIMEOUT = Duration.ofMinutes(5);

  private static final String HEADER = "accountId,cursor";

  private final Optional<SqlSource> sqlSource;
  private final int batchSize;
  private final Duration sqlTimeout;

  public ScopeReader(Optional<SqlSource> sqlSource) {
    this(sqlSource, DEFAULT_BATCH_SIZE, DEFAULT_SQL_TIMEOUT);
  }

  public ScopeReader(Optional<SqlSource> sqlSource, int batchSize, Duration sqlTimeout) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1, got " + batchSize);
    }
    if (sqlTimeout.toSeconds() < 1) {
      throw new IllegalArgumentException("sqlTimeout must be at least 1s, got " + sqlTimeout);
    }
    this.sqlSource = Objects.requireNonNull(sqlSource, "sqlSource");
    this.batchSize = batchSize;
    this.sqlTimeout = sqlTimeout;
  }

  /**
   * Streams the scope's accounts to {@code batches} in order, in batches of at most the batch size.
   *
   * @return the number of accounts and their digest, once all are read and valid
   * @throws ScopeException when the scope cannot be read or any account is invalid; batches already
   *     delivered must be discarded
   */
  public ScopeSummary read(Scope scope, Consumer<List<AccountCursor>> batches) {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(batches, "batches");
    if (scope instanceof Scope.Csv csv) {
      return readCsv(csv, batches);
    } else if (scope instanceof Scope.Inline inline) {
      return readInline(inline, batches);
    } else if (scope instanceof Scope.Sql sql) {
      return readSql(sql, batches);
    }
    throw new IllegalArgumentException("unknown scope " + scope);
  }

  private ScopeSummary readInline(Scope.Inline inline, Consumer<List<AccountCursor>> batches) {
    AccountIntake intake =
        new AccountIntake("inline scope", i -> "accounts[" + i + "]", batchSize, batches);
    List<AccountCursor> accounts = inline.accounts();
    for (int i = 0; i < accounts.size(); i++) {
      intake.accept(i, accounts.get(i).accountId(), accounts.get(i).cursor());
    }
    return intake.finish();
  }

  private ScopeSummary readCsv(Scope.Csv csv, Consumer<List<AccountCursor>> batches) {
    String source = "scope CSV '" + csv.path() + "'";
    Path path;
    try {
      path = Path.of(csv.path());
    } catch (InvalidPathException e) {
      throw new ScopeException(source + " is not a valid path: " + e.getReason());
    }
    if (!Files.exists(path)) {
      throw new ScopeException(
          source + " does not exist (looked for " + path.toAbsolutePath().normalize() + ")");
    }
    if (!Files.isRegularFile(path)) {
      throw new ScopeException(source + " is not a regular file");
    }
    long line = 0;
    try (BufferedReader in = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
      String text = in.readLine();
      line++;
      while (text != null && (text.isBlank() || text.equals("\uFEFF"))) {
        text = in.readLine();
        line++;
      }
      if (text == null) {
        throw new ScopeException(source + " is empty: the first line must be the header " + HEADER);
      }
      if (!isHeader(text)) {
        throw new ScopeException(
            source
                + " line "
                + line
                + ": the header must be exactly "
                + HEADER
                + " (got '"
                + abbreviate(text)
                + "')");
      }
      AccountIntake intake = new AccountIntake(source, n -> "line " + n, batchSize, batches);
      while ((text = in.readLine()) != null) {
        line++;
        if (text.isBlank()) {
          continue;
        }
        String[] fields = text.split(",", -1);
        if (fields.length != 2) {
          intake.problem(line, "expected 2 fields (" + HEADER + "), got " + fields.length);
        } else {
          intake.accept(line, unquote(fields[0].strip()), unquote(fields[1].strip()));
        }
      }
      return intake.finish();
    } catch (MalformedInputException e) {
      throw new ScopeException(source + " is not UTF-8 text (at line " + (line + 1) + ")", e);
    } catch (AccessDeniedException e) {
      throw new ScopeException(source + " cannot be read: permission denied", e);
    } catch (IOException e) {
      throw new ScopeException(source + " cannot be read: " + e.getMessage(), e);
    }
  }

  private static boolean isHeader(String line) {
    String[] names = line.replace("\uFEFF", "").split(",", -1);
    return names.length == 2
        && unquote(names[0].strip()).equals("accountId")
        && unquote(names[1].strip()).equals("cursor");
  }

  /** Spreadsheet exports quote fields; ids never contain quotes, so a plain strip is enough. */
  private static String unquote(String field) {
    if (field.length() >= 2 && field.startsWith("\"") && field.endsWith("\"")) {
      return field.substring(1, field.length() - 1);
    }
    return field;
  }

  private ScopeSummary readSql(Scope.Sql sql, Consumer<List<AccountCursor>> batches) {
    SqlSource source =
        sqlSource.orElseThrow(
            () ->
                new ScopeException(
                    "no scope SQL data source is configured (fencekeeper.scope-sql.url)"));
    String query = SelectOnly.require(sql.query());
    Connection connection;
    try {
      connection = DriverManager.getConnection(source.url(), source.user(), source.password());
    } catch (SQLException e) {
      throw new ScopeException(
          "cannot connect to the scope SQL data source " + source.url() + ": " + e.getMessage(), e);
    }
    try (connection) {
      connection.setReadOnly(true);
      // PostgreSQL honours the fetch size only inside a transaction; read-only, nothing to commit
      connection.setAutoCommit(false);
      try (Statement statement =
          connection.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
        statement.setFetchSize(batchSize);
        statement.setQueryTimeout((int) Math.min(Integer.MAX_VALUE, sqlTimeout.toSeconds()));
        try (ResultSet rows = statement.executeQuery(query)) {
          int[] columns = accountColumns(rows.getMetaData());
          AccountIntake intake =
              new AccountIntake("scope SQL query", n -> "row " + n, batchSize, batches);
          long row = 0;
          while (rows.next()) {
            row++;
            intake.accept(
                row, strip(rows.getString(columns[0])), strip(rows.getString(columns[1])));
          }
          return intake.finish();
        }
      } finally {
        connection.rollback();
      }
    } catch (SQLTimeoutException e) {
      throw timedOut(e);
    } catch (SQLException e) {
      if ("57014".equals(e.getSQLState())) { // PostgreSQL: canceling statement due to timeout
        throw timedOut(e);
      }
      throw new ScopeException("scope SQL query failed: " + e.getMessage(), e);
    }
  }

  private ScopeException timedOut(SQLException e) {
    return new ScopeException(
        "scope SQL query did not finish within " + sqlTimeout.toSeconds() + "s", e);
  }

  /** The positions of the account id and cursor columns; the message lists what came back. */
  private static int[] accountColumns(ResultSetMetaData meta) throws SQLException {
    int account = 0;
    int cursor = 0;
    List<String> labels = new ArrayList<>();
    for (int i = 1; i <= meta.getColumnCount(); i++) {
      String label = meta.getColumnLabel(i);
      labels.add(label);
      if (account == 0
          && (label.equalsIgnoreCase("account_id") || label.equalsIgnoreCase("accountId"))) {
        account = i;
      } else if (cursor == 0 && label.equalsIgnoreCase("cursor")) {
        cursor = i;
      }
    }
    if (account == 0 || cursor == 0) {
      List<String> missing = new ArrayList<>();
      if (account == 0) {
        missing.add("account_id (or accountId)");
      }
      if (cursor == 0) {
        missing.add("cursor");
      }
      throw new ScopeException(
          "scope SQL query must return the columns account_id (or accountId) and cursor; missing "
              + String.join(" and ", missing)
              + ", it returned "
              + labels);
    }
    return new int[] {account, cursor};
  }

  private static String strip(String value) {
    // CHAR columns come back padded; whitespace is never part of an id
    return value == null ? null : value.strip();
  }

  private static String abbreviate(String text) {
    return text.length() <= 60 ? text : text.substring(0, 60) + "...";
  }
}

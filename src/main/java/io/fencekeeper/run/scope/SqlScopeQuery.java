package io.fencekeeper.run.scope;

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
import java.util.Locale;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a scope query where it cannot do harm. {@link SelectOnly} is a first fence against mistakes;
 * the protection is the database's own:
 *
 * <ul>
 *   <li>PostgreSQL: a {@code READ ONLY} transaction (a write anywhere in the query, a writable CTE
 *       or {@code query_to_xml('delete ...')}, fails), a server-side {@code SET LOCAL
 *       statement_timeout}, and a role check: a superuser or a member of the server-file and signal
 *       roles is refused, because {@code pg_read_file}, {@code COPY ... PROGRAM} or {@code
 *       pg_terminate_backend} are reads as far as a transaction is concerned.
 *   <li>H2: only a database opened read-only ({@code ;ACCESS_MODE_DATA=r}) by a user without admin
 *       rights; H2's file functions ({@code CSVWRITE}, {@code FILE_WRITE}, {@code FILE_READ}) need
 *       admin rights and write outside the database, so read-only alone would not stop them.
 *   <li>Every source: at most {@code max-items-per-run + 1} rows are fetched, and the whole read is
 *       cut off at the timeout.
 * </ul>
 *
 * <p>A failure is reported by SQLState, the rule it stands for and the position in the query; never
 * with the driver's message, which can quote row values or the JDBC URL. The full message goes to
 * the node's log only.
 */
final class SqlScopeQuery {

  private static final Logger log = LoggerFactory.getLogger(SqlScopeQuery.class);

  /** Receives each row, numbered from 1. */
  interface Rows {
    void accept(long row, String accountId, String cursor);
  }

  private enum Dialect {
    POSTGRESQL,
    H2
  }

  private final SqlSource source;
  private final Duration timeout;
  private final long maxRows;
  private final int fetchSize;

  SqlScopeQuery(SqlSource source, Duration timeout, long maxRows, int fetchSize) {
    this.source = source;
    this.timeout = timeout;
    this.maxRows = maxRows;
    this.fetchSize = fetchSize;
  }

  void run(String query, Rows rows) {
    Dialect dialect = dialect(source.url());
    Connection connection;
    try {
      connection = DriverManager.getConnection(source.url(), source.user(), source.password());
    } catch (SQLException e) {
      log.warn("cannot connect to the scope SQL data source {}", source, e);
      // the cause tells a staging that goes on after a fault to wait for the source; the message
      // is all a client sees
      throw new ScopeException(
          "cannot connect to the scope SQL data source (SQLState "
              + e.getSQLState()
              + "); the node's log has the details",
          e);
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    try (connection) {
      connection.setAutoCommit(false);
      connection.setReadOnly(true);
      try (Statement statement =
          connection.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
        if (dialect == Dialect.POSTGRESQL) {
          guardPostgres(statement);
        } else {
          guardH2(connection, statement);
        }
        statement.setFetchSize(fetchSize);
        // one more than allowed, so that the intake can tell "too many" from "exactly the limit"
        statement.setMaxRows((int) Math.min(Integer.MAX_VALUE, maxRows + 1));
        // a client-side fallback well after the server's own timeout
        statement.setQueryTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toSeconds() + 5));
        try (ResultSet result = statement.executeQuery(query)) {
          int[] columns = accountColumns(result.getMetaData());
          long row = 0;
          while (result.next()) {
            row++;
            rows.accept(
                row, strip(result.getString(columns[0])), strip(result.getString(columns[1])));
            // statement_timeout restarts with every fetch of a cursor: the read as a whole is
            // bounded here
            if (System.nanoTime() > deadline) {
              statement.cancel();
              throw timedOut();
            }
          }
        }
      } finally {
        connection.rollback();
      }
    } catch (SQLTimeoutException e) {
      throw timedOut();
    } catch (SQLException e) {
      if ("57014".equals(e.getSQLState()) || "57014".equals(stateOf(e.getNextException()))) {
        throw timedOut(); // PostgreSQL: canceling statement due to statement timeout
      }
      log.warn("scope SQL query failed on {}", source, e);
      throw new ScopeException(failure(query, e), e);
    }
  }

  private static Dialect dialect(String url) {
    if (url.startsWith("jdbc:postgresql:")) {
      return Dialect.POSTGRESQL;
    }
    if (url.startsWith("jdbc:h2:")) {
      return Dialect.H2;
    }
    throw new ScopeRefused(
        "scope",
        "the scope SQL data source must be PostgreSQL or H2 (fencekeeper.scope-sql.url): only"
            + " these can be held to read-only here");
  }

  private void guardPostgres(Statement statement) throws SQLException {
    // first statement of the transaction: from here on the server refuses every write
    statement.execute("SET TRANSACTION READ ONLY");
    statement.execute("SET LOCAL statement_timeout = " + Math.max(1, timeout.toMillis()));
    statement.execute("SET LOCAL lock_timeout = " + Math.max(1, timeout.toMillis()));
    try (ResultSet role =
        statement.executeQuery(
            "SELECT r.rolsuper, EXISTS (SELECT 1 FROM pg_roles g"
                + " WHERE g.rolname IN ('pg_read_server_files', 'pg_write_server_files',"
                + " 'pg_execute_server_program', 'pg_signal_backend', 'pg_read_all_data')"
                + " AND pg_has_role(current_user, g.oid, 'MEMBER')),"
                + " current_setting('transaction_read_only')"
                + " FROM pg_roles r WHERE r.rolname = current_user")) {
      if (!role.next()) {
        throw unsafe("the scope SQL role cannot be looked up in pg_roles");
      }
      if (role.getBoolean(1)) {
        throw unsafe(
            "the scope SQL role is a superuser, which can read server files and end sessions");
      }
      if (role.getBoolean(2)) {
        throw unsafe(
            "the scope SQL role is a member of pg_read_server_files, pg_write_server_files,"
                + " pg_execute_server_program, pg_signal_backend or pg_read_all_data");
      }
      if (!"on".equals(role.getString(3))) {
        throw unsafe("the scope SQL transaction is not read-only");
      }
    }
  }

  private void guardH2(Connection connection, Statement statement) throws SQLException {
    if (!source.url().toUpperCase(Locale.ROOT).contains("ACCESS_MODE_DATA=R")) {
      throw unsafe(
          "an H2 scope source must be opened read-only: add ;ACCESS_MODE_DATA=r to"
              + " fencekeeper.scope-sql.url");
    }
    // the URL setting is ignored when the database is already open in this process
    if (!connection.getMetaData().isReadOnly()) {
      throw unsafe(
          "the H2 scope database is open for writing (ACCESS_MODE_DATA=r only applies when the"
              + " database is opened): use a database this node opens read-only");
    }
    try (ResultSet admin =
        statement.executeQuery(
            "SELECT IS_ADMIN FROM INFORMATION_SCHEMA.USERS WHERE USER_NAME = CURRENT_USER")) {
      if (!admin.next() || admin.getBoolean(1)) {
        throw unsafe(
            "the H2 scope user has admin rights, which can read and write files (CSVWRITE,"
                + " FILE_READ): use a user with SELECT on the support tables only");
      }
    }
    statement.execute("SET QUERY_TIMEOUT " + Math.max(1, timeout.toMillis()));
  }

  private static ScopeRefused unsafe(String why) {
    return new ScopeRefused(
        "scope",
        "the scope SQL data source is not safe to query: "
            + why
            + " (fencekeeper.scope-sql, see docs/security.md)");
  }

  private ScopeException timedOut() {
    return new ScopeException("scope SQL query did not finish within " + timeout.toSeconds() + "s");
  }

  private static String stateOf(SQLException e) {
    return e == null ? null : e.getSQLState();
  }

  /** SQLState, the rule it stands for and, where the database says, the line and column. */
  static String failure(String query, SQLException e) {
    String state = e.getSQLState() == null ? "unknown" : e.getSQLState();
    StringBuilder message = new StringBuilder("scope SQL query failed");
    int position = position(e);
    if (position > 0 && position <= query.length() + 1) {
      int line = 1;
      int column = 1;
      for (int i = 0; i < position - 1; i++) {
        if (query.charAt(i) == '\n') {
          line++;
          column = 1;
        } else {
          column++;
        }
      }
      message.append(" at line ").append(line).append(", column ").append(column);
    }
    return message
        .append(": ")
        .append(rule(state))
        .append(" (SQLState ")
        .append(state)
        .append(')')
        .toString();
  }

  private static int position(SQLException e) {
    if (e instanceof PSQLException p) {
      ServerErrorMessage server = p.getServerErrorMessage();
      if (server != null) {
        return server.getPosition();
      }
    }
    return 0;
  }

  private static String rule(String state) {
    return switch (state) {
      case "25006", "90097" -> "the query tried to write; a scope query may only read";
      case "42501", "90096" -> "permission denied: the scope role may only read the support tables";
      case "90040" -> "the operation needs admin rights, which the scope user must not have";
      case "42P01", "42S02", "42S01", "42102", "42104" ->
          "a table or view does not exist or is not visible to the scope role";
      case "42703", "42S22", "42122" -> "a column does not exist";
      case "42883", "90022" -> "a function does not exist or may not be called by the scope role";
      case "42601", "42000", "42001" -> "syntax error";
      case "0A000" -> "a feature the scope source does not support";
      default -> {
        String family = state.length() >= 2 ? state.substring(0, 2) : state;
        yield switch (family) {
          case "22" -> "a value could not be computed (data exception)";
          case "42" -> "the query is not valid (syntax or access rule)";
          case "53", "54" -> "the database hit a resource limit";
          case "08" -> "the connection to the scope source failed";
          case "40" -> "the transaction was rolled back by the database";
          default -> "the database refused the query";
        };
      }
    };
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
      // the labels come from the query text, not from the data
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
}

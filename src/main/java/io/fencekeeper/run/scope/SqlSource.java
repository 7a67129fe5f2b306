package io.fencekeeper.run.scope;

import com.typesafe.config.Config;
import java.util.Optional;

/**
 * The database a {@link Scope.Sql} query runs against (the support database), configured under
 * {@code fencekeeper.scope-sql { url, user, password }}. Give it a role that may only read the
 * support tables: the reader runs the query in a read-only transaction and refuses a superuser
 * (PostgreSQL) or an admin on a writable database (H2), see {@code SqlScopeQuery} and
 * docs/security.md; the role is what the database enforces everywhere.
 */
public record SqlSource(String url, String user, String password) {

  public SqlSource {
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException("fencekeeper.scope-sql.url must be a JDBC URL");
    }
  }

  /** The configured source, or empty when {@code fencekeeper.scope-sql.url} is absent or blank. */
  public static Optional<SqlSource> fromConfig(Config config) {
    String path = "fencekeeper.scope-sql.";
    if (!config.hasPath(path + "url") || config.getString(path + "url").isBlank()) {
      return Optional.empty();
    }
    return Optional.of(
        new SqlSource(
            config.getString(path + "url"),
            config.hasPath(path + "user") ? config.getString(path + "user") : null,
            config.hasPath(path + "password") ? config.getString(path + "password") : null));
  }

  @Override
  public String toString() {
    // the password never reaches a log line
    return "SqlSource[url=" + url + ", user=" + user + ", password=***]";
  }
}

package io.fencekeeper.run.scope;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.fencekeeper.CborSerializable;
import java.util.List;

/**
 * Which accounts a run covers. The JSON shape (docs/design.md, "HTTP API") names the kind in a
 * {@code type} property, never a class name:
 *
 * <pre>
 * {"type": "inline", "accounts": [{"accountId": "a-1", "cursor": "c-1"}]}
 * {"type": "csv", "path": "accounts.csv"}
 * {"type": "sql", "query": "select account_id, cursor from accounts"}
 * </pre>
 *
 * A scope only describes where the accounts come from; {@link ScopeReader} reads and validates
 * them.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
  @JsonSubTypes.Type(value = Scope.Csv.class, name = "csv"),
  @JsonSubTypes.Type(value = Scope.Inline.class, name = "inline"),
  @JsonSubTypes.Type(value = Scope.Sql.class, name = "sql"),
  @JsonSubTypes.Type(value = Scope.Upload.class, name = "upload")
})
public sealed interface Scope extends CborSerializable
    permits Scope.Csv, Scope.Inline, Scope.Sql, Scope.Upload {

  /**
   * A CSV file with the header {@code accountId,cursor} in the scope directory ({@code
   * fencekeeper.scope-dir}) of the node that creates the run; the path is relative to it and cannot
   * leave it.
   */
  record Csv(String path) implements Scope {
    public Csv {
      if (path == null || path.isBlank()) {
        throw new IllegalArgumentException("a csv scope needs a path");
      }
    }
  }

  /** The accounts themselves, in order; meant for small runs and tests. */
  record Inline(List<AccountCursor> accounts) implements Scope {
    public Inline {
      if (accounts == null) {
        throw new IllegalArgumentException("an inline scope needs accounts");
      }
      for (int i = 0; i < accounts.size(); i++) {
        if (accounts.get(i) == null) {
          throw new IllegalArgumentException("inline scope accounts[" + i + "] is empty");
        }
      }
      accounts = List.copyOf(accounts);
    }
  }

  /**
   * A single SELECT returning the columns {@code account_id} (or {@code accountId}) and {@code
   * cursor}, run read-only against the configured scope data source ({@code
   * fencekeeper.scope-sql}). Add an ORDER BY: the scope digest follows the row order.
   */
  record Sql(String query) implements Scope {
    public Sql {
      if (query == null || query.isBlank()) {
        throw new IllegalArgumentException("a sql scope needs a query");
      }
    }
  }

  /**
   * A CSV sent by the caller with the request: {@code POST /api/runs} with a {@code text/csv} body,
   * or the {@code run} command streaming its {@code --accounts} file. The request records only that
   * the accounts were uploaded; their digest tells one upload from another.
   */
  record Upload() implements Scope {}
}

package io.fencekeeper.provider.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A configured statement with named parameters ({@code :accountId}), rewritten once into a JDBC
 * statement with {@code ?} placeholders. Values are always bound, never spliced into the text, so
 * an account id can never become SQL.
 *
 * <p>Known names: {@code job, businessDate (a DATE), accountId, cursor, itemId, amountMinor (a
 * BIGINT), currency, action, idempotencyKey, fencingToken (a BIGINT)}. Quoted text and PostgreSQL's
 * {@code ::type} casts are left alone.
 */
record NamedSql(String jdbcSql, List<String> parameters) {

  static final Set<String> KNOWN =
      Set.of(
          "job",
          "businessDate",
          "accountId",
          "cursor",
          "itemId",
          "amountMinor",
          "currency",
          "action",
          "idempotencyKey",
          "fencingToken");

  static NamedSql parse(String text) {
    StringBuilder sql = new StringBuilder(text.length());
    List<String> parameters = new ArrayList<>();
    char quote = 0;
    int i = 0;
    while (i < text.length()) {
      char c = text.charAt(i);
      if (quote != 0) {
        sql.append(c);
        if (c == quote) {
          quote = 0;
        }
        i++;
      } else if (c == '\'' || c == '"') {
        quote = c;
        sql.append(c);
        i++;
      } else if (c == ':' && i + 1 < text.length() && text.charAt(i + 1) == ':') {
        sql.append("::");
        i += 2;
      } else if (c == ':' && i + 1 < text.length() && Character.isLetter(text.charAt(i + 1))) {
        int end = i + 1;
        while (end < text.length() && Character.isLetterOrDigit(text.charAt(end))) {
          end++;
        }
        String name = text.substring(i + 1, end);
        if (!KNOWN.contains(name)) {
          throw new IllegalArgumentException(
              "unknown parameter :" + name + " in provider SQL; known parameters are " + KNOWN);
        }
        parameters.add(name);
        sql.append('?');
        i = end;
      } else {
        sql.append(c);
        i++;
      }
    }
    return new NamedSql(sql.toString(), List.copyOf(parameters));
  }

  void bind(PreparedStatement statement, Map<String, Object> values) throws SQLException {
    for (int index = 0; index < parameters.size(); index++) {
      statement.setObject(index + 1, values.get(parameters.get(index)));
    }
  }
}

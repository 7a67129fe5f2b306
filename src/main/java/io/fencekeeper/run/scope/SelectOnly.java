package io.fencekeeper.run.scope;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Refuses a scope query that is not one plain SELECT. A guard against mistakes, not a sandbox: the
 * controls are the read-only connection the reader opens and a read-only role for the scope data
 * source. It errs on the side of refusing: a ';' anywhere but at the very end is refused even
 * inside a string literal, because string syntax differs between databases.
 */
final class SelectOnly {

  private static final Pattern WORD = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*");

  /** Words that write, lock or change the schema; {@code INTO} catches SELECT ... INTO table. */
  private static final Set<String> REFUSED =
      Set.of(
          "INSERT",
          "UPDATE",
          "DELETE",
          "MERGE",
          "CREATE",
          "DROP",
          "ALTER",
          "TRUNCATE",
          "GRANT",
          "REVOKE",
          "CALL",
          "COPY",
          "INTO",
          "LOCK");

  private SelectOnly() {}

  /** Answers the query without a trailing ';', or throws a {@link ScopeException} saying why. */
  static String require(String query) {
    String statement = query.strip();
    if (statement.endsWith(";")) {
      statement = statement.substring(0, statement.length() - 1).strip();
    }
    if (statement.indexOf(';') >= 0) {
      throw new ScopeException(
          "scope SQL query must be a single SELECT statement: remove the ';' (found more than one"
              + " statement)");
    }
    Matcher words = WORD.matcher(codeOnly(statement));
    if (!words.find() || !words.group().equalsIgnoreCase("SELECT")) {
      // the first keyword, never the text around it: an answer does not echo the request
      String first = words.hitEnd() ? "no keyword" : "the keyword " + keyword(words.group());
      throw new ScopeException(
          "scope SQL query must be a single SELECT statement (its code starts with " + first + ")");
    }
    while (words.find()) {
      String word = words.group().toUpperCase(Locale.ROOT);
      if (REFUSED.contains(word)) {
        throw new ScopeException(
            "scope SQL query must be a plain SELECT: '"
                + word
                + "' is not allowed (the scope is read, never written or locked)");
      }
    }
    return statement;
  }

  /** The statement with string literals, quoted identifiers and comments blanked out. */
  private static String codeOnly(String sql) {
    StringBuilder code = new StringBuilder(sql.length());
    int i = 0;
    while (i < sql.length()) {
      char c = sql.charAt(i);
      if (c == '\'' || c == '"') {
        int end = i + 1;
        while (end < sql.length()) {
          if (sql.charAt(end) == c) {
            if (end + 1 < sql.length() && sql.charAt(end + 1) == c) {
              end += 2; // doubled quote: still inside
              continue;
            }
            break;
          }
          end++;
        }
        code.append(' ');
        i = end + 1;
      } else if (sql.startsWith("--", i)) {
        int end = sql.indexOf('\n', i);
        i = end < 0 ? sql.length() : end;
      } else if (sql.startsWith("/*", i)) {
        int end = sql.indexOf("*/", i + 2);
        code.append(' ');
        i = end < 0 ? sql.length() : end + 2;
      } else {
        code.append(c);
        i++;
      }
    }
    return code.toString();
  }

  private static String keyword(String word) {
    String upper = word.toUpperCase(Locale.ROOT);
    return upper.length() <= 20 ? upper : upper.substring(0, 20) + "...";
  }
}

package io.fencekeeper.api.runs;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code scope} object of a JSON create request, read key by key rather than handed to a data
 * binder: a binder's refusals quote the input and name Java classes ({@code Unrecognized field
 * "evil" (class io.fencekeeper.run.scope.AccountCursor)}). A scope whose type is missing or unknown
 * is a {@code 400 bad_request}; anything wrong inside a scope of a known type is {@code 422
 * invalid_scope} naming the field or index and the rule, never the value (docs/security.md, "What
 * errors say"), as a CSV upload's lines are.
 */
final class ScopeBody {

  /** How many problems of an inline scope are listed, as for CSV lines; the rest are counted. */
  static final int REPORTED_PROBLEMS = 20;

  static final int MAX_PATH = 4096;
  static final int MAX_QUERY = 60_000;

  private static final Map<String, Set<String>> KEYS =
      Map.of(
          "inline", Set.of("type", "accounts"),
          "csv", Set.of("type", "path"),
          "sql", Set.of("type", "query"));

  private static final Set<String> ACCOUNT_KEYS = Set.of("accountId", "cursor");

  private ScopeBody() {}

  static Scope read(JsonNode scope) {
    JsonNode type = scope.get("type");
    if (type == null || !type.isTextual()) {
      throw ApiError.badRequest("scope.type", "scope.type is required: inline, csv or sql");
    }
    Set<String> keys = KEYS.get(type.textValue());
    if (keys == null) {
      throw ApiError.badRequest("scope.type", "scope.type must be inline, csv or sql");
    }
    Iterator<String> names = scope.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!keys.contains(name)) {
        throw invalid(
            "scope",
            "scope has an unknown field "
                + ApiError.quotedName(name)
                + "; a scope of type "
                + type.textValue()
                + " takes "
                + String.join(", ", keys.stream().sorted().toList()));
      }
    }
    return switch (type.textValue()) {
      case "csv" -> new Scope.Csv(text(scope, "path", MAX_PATH));
      case "sql" -> new Scope.Sql(text(scope, "query", MAX_QUERY));
      default -> inline(scope.get("accounts"));
    };
  }

  private static String text(JsonNode scope, String key, int maxLength) {
    JsonNode value = scope.get(key);
    String field = "scope." + key;
    if (value == null || !value.isTextual() || value.textValue().isBlank()) {
      throw invalid(field, field + " is required: a non-empty string");
    }
    if (value.textValue().length() > maxLength) {
      throw invalid(field, field + " must be at most " + maxLength + " characters");
    }
    return value.textValue();
  }

  /** Every account is checked, so one answer lists every bad entry (up to a cap), by index. */
  private static Scope inline(JsonNode accounts) {
    if (accounts == null || !accounts.isArray()) {
      throw invalid(
          "scope.accounts",
          "scope.accounts is required: an array of {\"accountId\": ..., \"cursor\": ...} objects");
    }
    List<AccountCursor> read = new ArrayList<>(accounts.size());
    List<String> problems = new ArrayList<>();
    String firstField = null;
    int count = 0;
    for (int i = 0; i < accounts.size(); i++) {
      String at = "scope.accounts[" + i + "]";
      String problem = accountProblem(accounts.get(i), at);
      if (problem == null) {
        JsonNode account = accounts.get(i);
        read.add(
            new AccountCursor(
                account.get("accountId").textValue(), account.get("cursor").textValue()));
        continue;
      }
      count++;
      if (firstField == null) {
        firstField = problem.substring(0, problem.indexOf(' '));
      }
      if (problems.size() < REPORTED_PROBLEMS) {
        problems.add(problem);
      }
    }
    if (count == 0) {
      return new Scope.Inline(read);
    }
    StringBuilder message =
        new StringBuilder("the inline scope has ")
            .append(count)
            .append(count == 1 ? " invalid entry:" : " invalid entries:");
    problems.forEach(p -> message.append("\n  ").append(p));
    if (count > problems.size()) {
      message.append("\n  ... and ").append(count - problems.size()).append(" more");
    }
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("field", firstField);
    extra.put("problems", problems);
    throw new ApiError(422, "invalid_scope", message.toString(), extra);
  }

  /** What is wrong with one account, starting with the field it is about; null when nothing. */
  private static String accountProblem(JsonNode account, String at) {
    if (account == null || !account.isObject()) {
      return at + " must be an object with accountId and cursor";
    }
    Iterator<String> names = account.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!ACCOUNT_KEYS.contains(name)) {
        return at
            + " has an unknown field "
            + ApiError.quotedName(name)
            + "; an account takes accountId and cursor";
      }
    }
    for (String key : List.of("accountId", "cursor")) {
      JsonNode value = account.get(key);
      if (value == null || !value.isTextual() || !ItemId.isSegment(value.textValue())) {
        return at + "." + key + " must be " + ItemId.SEGMENT_RULE;
      }
    }
    return null;
  }

  private static ApiError invalid(String field, String message) {
    return new ApiError(422, "invalid_scope", message, Map.of("field", field));
  }
}

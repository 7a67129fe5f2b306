package io.fencekeeper.api.runs;

import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiIds;
import io.fencekeeper.run.RunFilter;
import io.fencekeeper.run.RunState;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The query of {@code GET /api/runs}: {@code state} (one or more, comma-separated), {@code job},
 * {@code from} and {@code to} (business dates, inclusive), {@code limit} and {@code cursor} (the
 * {@code next} of the previous page). Each refusal names its parameter, never echoes its value.
 */
final class RunListQuery {

  static final List<String> PARAMETERS = List.of("state", "job", "from", "to", "limit", "cursor");

  private RunListQuery() {}

  static RunFilter filter(Map<String, String> query) {
    for (String name : query.keySet()) {
      if (!PARAMETERS.contains(name)) {
        throw ApiError.badRequest(
            ApiError.nameOf(name),
            "unknown query parameter " + ApiError.quotedName(name) + "; known: " + PARAMETERS);
      }
    }
    Set<RunState> states = EnumSet.noneOf(RunState.class);
    String state = query.get("state");
    if (state != null && !state.isEmpty()) {
      for (String one : state.split(",", -1)) {
        try {
          states.add(RunState.valueOf(one.trim().toUpperCase(Locale.ROOT)));
        } catch (IllegalArgumentException e) {
          throw ApiError.badRequest(
              "state", "state must be one or more of " + List.of(RunState.values()));
        }
      }
    }
    String job = query.get("job");
    if (job != null && job.isEmpty()) {
      job = null;
    }
    if (job != null && job.length() > 128) {
      throw ApiError.badRequest("job", "job must be at most 128 characters");
    }
    LocalDate from = date(query, "from");
    LocalDate to = date(query, "to");
    if (from != null && to != null && from.isAfter(to)) {
      throw ApiError.badRequest("from", "from must not be after to");
    }
    int limit =
        (int) ApiIds.longParam(query, "limit", 1, RunFilter.MAX_LIMIT, RunFilter.DEFAULT_LIMIT);
    RunFilter.Cursor after = null;
    String cursor = query.get("cursor");
    if (cursor != null && !cursor.isEmpty()) {
      if (cursor.length() > 1024) {
        throw ApiError.badRequest("cursor", "cursor is not one this API wrote");
      }
      after =
          RunFilter.Cursor.parse(cursor)
              .orElseThrow(() -> ApiError.badRequest("cursor", "cursor is not one this API wrote"));
    }
    return new RunFilter(states, job, from, to, after, limit);
  }

  private static LocalDate date(Map<String, String> query, String name) {
    String value = query.get(name);
    if (value == null || value.isEmpty()) {
      return null;
    }
    try {
      return LocalDate.parse(value);
    } catch (DateTimeParseException e) {
      throw ApiError.badRequest(name, name + " must be a date (YYYY-MM-DD)");
    }
  }
}

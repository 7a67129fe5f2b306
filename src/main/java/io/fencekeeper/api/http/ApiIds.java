package io.fencekeeper.api.http;

import io.fencekeeper.item.ItemId;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Map;

/**
 * Run and item ids from a path segment; a bad id is a 400 that names the parameter and the rule it
 * breaks, never what was sent.
 */
public final class ApiIds {

  private ApiIds() {}

  public static String runId(String value) {
    String[] parts = value.split("/", -1);
    if (parts.length != 2) {
      throw ApiError.badRequest(
          "runId", "runId must look like job/businessDate (the '/' percent-encoded as %2F)");
    }
    try {
      ItemId.requireSegment("job", parts[0]);
      LocalDate.parse(parts[1]);
    } catch (IllegalArgumentException e) {
      throw ApiError.badRequest("runId", "runId is invalid: " + e.getMessage());
    } catch (DateTimeParseException e) {
      throw ApiError.badRequest("runId", "runId has an invalid businessDate (yyyy-MM-dd)");
    }
    return value;
  }

  public static ItemId itemId(String value) {
    try {
      return ItemId.parse(value);
    } catch (IllegalArgumentException e) {
      throw ApiError.badRequest("itemId", e.getMessage());
    }
  }

  /** A whole-number query parameter between {@code min} and {@code max}, or {@code dflt}. */
  public static long longParam(
      Map<String, String> query, String name, long min, long max, long dflt) {
    String value = query.get(name);
    if (value == null || value.isEmpty()) {
      return dflt;
    }
    long n;
    try {
      n = Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw ApiError.badRequest(name, name + " must be a whole number");
    }
    if (n < min || n > max) {
      throw ApiError.badRequest(name, name + " must be between " + min + " and " + max);
    }
    return n;
  }
}

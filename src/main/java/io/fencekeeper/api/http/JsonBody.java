package io.fencekeeper.api.http;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Optional;
import java.util.Set;

/**
 * A request body read field by field, so that every refusal names the field: {@code "leaseMillis
 * must be a whole number"} rather than a parser's stack trace. Unknown fields are refused too: a
 * typo like {@code "tokn"} must not silently mean "no token", and so is a key given twice ({@code
 * {"job":"a","job":"b"}}): which one counts would be the parser's choice, not the caller's. A
 * refusal names the field and where, never the value (docs/security.md, "What errors say").
 */
public final class JsonBody {

  private final ObjectNode json;

  private JsonBody(ObjectNode json) {
    this.json = json;
  }

  /** Parses the body and refuses any field not in {@code allowed}. */
  public static JsonBody parse(ObjectMapper mapper, byte[] bytes, Set<String> allowed) {
    if (bytes.length == 0) {
      throw new ApiError(400, "bad_request", "a JSON object body is required");
    }
    JsonNode node;
    try {
      node = mapper.readTree(bytes);
    } catch (JacksonException e) {
      throw notJson(e);
    } catch (java.io.IOException e) {
      throw new ApiError(400, "malformed_json", "the body could not be read");
    }
    if (node == null || !node.isObject()) {
      throw new ApiError(400, "bad_request", "the body must be a JSON object");
    }
    Iterator<String> names = node.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!allowed.contains(name)) {
        throw ApiError.badRequest(
            ApiError.nameOf(name),
            "unknown field "
                + ApiError.quotedName(name)
                + "; allowed: "
                + String.join(", ", sorted(allowed)));
      }
    }
    return new JsonBody((ObjectNode) node);
  }

  /**
   * A key given twice (the mapper detects it: {@link ApiJson}) names the key; any other parse error
   * says where the body stops being JSON. The parser's own message is not passed on: it quotes the
   * input and names Java types.
   */
  private static ApiError notJson(JacksonException e) {
    String where = "";
    if (e.getLocation() != null && e.getLocation().getLineNr() > 0) {
      where =
          " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
    }
    String original = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
    if (original.startsWith("Duplicate field ")) {
      String key = e.getProcessor() instanceof JsonParser parser ? currentName(parser) : null;
      return ApiError.badRequest(
          ApiError.nameOf(key),
          "the key "
              + ApiError.quotedName(key)
              + " appears more than once"
              + where
              + "; send each key once");
    }
    return new ApiError(400, "malformed_json", "the body is not valid JSON" + where);
  }

  private static String currentName(JsonParser parser) {
    try {
      return parser.currentName();
    } catch (java.io.IOException | RuntimeException e) {
      return null;
    }
  }

  private static java.util.List<String> sorted(Set<String> names) {
    return names.stream().sorted().toList();
  }

  private JsonNode present(String field) {
    JsonNode value = json.get(field);
    return value == null || value.isNull() ? null : value;
  }

  /** Whether the body gives {@code field} a value (null counts as not given). */
  public boolean has(String field) {
    return present(field) != null;
  }

  public String requireString(String field, int maxLength) {
    return optionalString(field, maxLength)
        .orElseThrow(() -> ApiError.badRequest(field, field + " is required"));
  }

  /**
   * A name that is shown and journaled as it is (a worker id): control characters, line breaks and
   * bidirectional controls are refused, as they would reach the audit, the reports and terminals.
   */
  public String requirePrintable(String field, int maxLength) {
    String text = requireString(field, maxLength);
    if (!PrintableText.isPrintable(text)) {
      throw ApiError.badRequest(
          field,
          field
              + " must not contain control characters (U+0000-U+001F, U+007F-U+009F), line"
              + " separators or bidirectional controls");
    }
    return text;
  }

  public Optional<String> optionalString(String field, int maxLength) {
    JsonNode value = present(field);
    if (value == null) {
      return Optional.empty();
    }
    if (!value.isTextual()) {
      throw ApiError.badRequest(field, field + " must be a string");
    }
    String text = value.textValue();
    if (text.isBlank()) {
      throw ApiError.badRequest(field, field + " must not be blank");
    }
    if (text.length() > maxLength) {
      throw ApiError.badRequest(field, field + " must be at most " + maxLength + " characters");
    }
    return Optional.of(text);
  }

  public long requireLong(String field, long min, long max) {
    return optionalLong(field, min, max)
        .orElseThrow(() -> ApiError.badRequest(field, field + " is required"));
  }

  public Optional<Long> optionalLong(String field, long min, long max) {
    JsonNode value = present(field);
    if (value == null) {
      return Optional.empty();
    }
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw ApiError.badRequest(field, field + " must be a whole number");
    }
    long n = value.longValue();
    if (n < min || n > max) {
      throw ApiError.badRequest(field, field + " must be between " + min + " and " + max);
    }
    return Optional.of(n);
  }

  public int optionalInt(String field, int min, int max, int fallback) {
    return optionalLong(field, min, max).map(Long::intValue).orElse(fallback);
  }

  public boolean optionalBoolean(String field, boolean fallback) {
    JsonNode value = present(field);
    if (value == null) {
      return fallback;
    }
    if (!value.isBoolean()) {
      throw ApiError.badRequest(field, field + " must be true or false");
    }
    return value.booleanValue();
  }

  public Instant requireInstant(String field) {
    String text = requireString(field, 64);
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      throw ApiError.badRequest(
          field, field + " must be an ISO-8601 instant such as 2026-11-30T06:00:00Z");
    }
  }

  public LocalDate requireDate(String field) {
    String text = requireString(field, 32);
    try {
      return LocalDate.parse(text);
    } catch (DateTimeParseException e) {
      throw ApiError.badRequest(field, field + " must be a date such as 2026-11-29 (yyyy-MM-dd)");
    }
  }

  /** A lease in milliseconds: positive and no longer than {@code max}. */
  /**
   * A lease in milliseconds, 1 to {@code max} (fencekeeper.item.max-lease): a longer one is refused
   * naming the field and the limit, never cut.
   */
  public Duration requireLease(String field, Duration max) {
    JsonNode value = present(field);
    if (value != null
        && value.isIntegralNumber()
        && (!value.canConvertToLong() || value.longValue() > max.toMillis())) {
      throw new ApiError(
          400,
          "bad_request",
          field
              + " must be between 1 and "
              + max.toMillis()
              + " (fencekeeper.item.max-lease); a longer lease is refused, never cut",
          java.util.Map.of("field", field, "limit", max.toMillis()));
    }
    long millis = requireLong(field, 1, max.toMillis());
    return Duration.ofMillis(millis);
  }

  public JsonNode requireObject(String field) {
    JsonNode value = present(field);
    if (value == null) {
      throw ApiError.badRequest(field, field + " is required");
    }
    if (!value.isObject()) {
      throw ApiError.badRequest(field, field + " must be a JSON object");
    }
    return value;
  }
}

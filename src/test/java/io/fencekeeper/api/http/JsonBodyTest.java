package io.fencekeeper.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Every refusal of a request body names the field and the rule, never the value the caller sent
 * (docs/security.md, "What errors say"), and a body that is read changes nothing when it is wrong.
 */
class JsonBodyTest {

  private static final ObjectMapper MAPPER = ApiJson.mapper();
  private static final Set<String> FIELDS =
      Set.of("workerId", "leaseMillis", "token", "force", "at", "date", "scope");

  @Test
  void whatIsNotAJsonObjectIsRefusedWithoutEchoingIt() {
    assertRefused(() -> body(""), "bad_request", "a JSON object body is required");
    assertRefused(() -> body("[1,2]"), "bad_request", "the body must be a JSON object");
    ApiError broken = assertRefused(() -> body("{\"workerId\": secret-value"), "malformed_json");
    assertTrue(
        broken.getMessage().startsWith("the body is not valid JSON at line 1"),
        broken.getMessage());
    assertFalse(broken.getMessage().contains("secret"), broken.getMessage());
  }

  @Test
  void unknownAndRepeatedKeysAreRefusedByName() {
    ApiError unknown = assertRefused(() -> body("{\"tokn\": 1}"), "bad_request");
    assertEquals(
        "unknown field 'tokn'; allowed: at, date, force, leaseMillis, scope, token, workerId",
        unknown.getMessage());
    ApiError twice =
        assertRefused(() -> body("{\"workerId\": \"a\", \"workerId\": \"b\"}"), "bad_request");
    assertTrue(
        twice.getMessage().startsWith("the key 'workerId' appears more than once"),
        twice.getMessage());
  }

  @Test
  void stringsAreTypedBoundedAndNotBlank() {
    assertEquals("w-1", body("{\"workerId\": \"w-1\"}").requireString("workerId", 8));
    assertEquals(Optional.empty(), body("{\"workerId\": null}").optionalString("workerId", 8));
    assertRefused(
        () -> body("{}").requireString("workerId", 8), "bad_request", "workerId is required");
    assertRefused(
        () -> body("{\"workerId\": 5}").requireString("workerId", 8),
        "bad_request",
        "workerId must be a string");
    assertRefused(
        () -> body("{\"workerId\": \"  \"}").requireString("workerId", 8),
        "bad_request",
        "workerId must not be blank");
    assertRefused(
        () -> body("{\"workerId\": \"123456789\"}").requireString("workerId", 8),
        "bad_request",
        "workerId must be at most 8 characters");
    ApiError control =
        assertRefused(
            () -> body("{\"workerId\": \"w\\u0007\"}").requirePrintable("workerId", 8),
            "bad_request");
    assertTrue(control.getMessage().startsWith("workerId must not contain control characters"));
  }

  @Test
  void numbersAreWholeAndWithinTheirBounds() {
    assertEquals(5000, body("{\"leaseMillis\": 5000}").requireLong("leaseMillis", 1, 10_000));
    for (String bad : new String[] {"1.5", "\"5000\"", "true", "99999999999999999999"}) {
      assertRefused(
          () -> body("{\"leaseMillis\": " + bad + "}").requireLong("leaseMillis", 1, 10_000),
          "bad_request",
          "leaseMillis must be a whole number");
    }
    assertRefused(
        () -> body("{\"leaseMillis\": 0}").requireLong("leaseMillis", 1, 10_000),
        "bad_request",
        "leaseMillis must be between 1 and 10000");
    assertEquals(7, body("{}").optionalInt("token", 0, 10, 7));
    assertEquals(
        Duration.ofSeconds(5),
        body("{\"leaseMillis\": 5000}").requireLease("leaseMillis", Duration.ofHours(1)));
    assertRefused(
        () -> body("{\"leaseMillis\": 3600001}").requireLease("leaseMillis", Duration.ofHours(1)),
        "bad_request",
        "leaseMillis must be between 1 and 3600000 (fencekeeper.item.max-lease); a longer lease is"
            + " refused, never cut");
  }

  @Test
  void booleansInstantsDatesAndObjectsSayTheirShape() {
    assertTrue(body("{\"force\": true}").optionalBoolean("force", false));
    assertFalse(body("{}").optionalBoolean("force", false));
    assertRefused(
        () -> body("{\"force\": \"yes\"}").optionalBoolean("force", false),
        "bad_request",
        "force must be true or false");
    assertEquals(
        Instant.parse("2026-11-30T06:00:00Z"),
        body("{\"at\": \"2026-11-30T06:00:00Z\"}").requireInstant("at"));
    assertRefused(
        () -> body("{\"at\": \"tomorrow\"}").requireInstant("at"),
        "bad_request",
        "at must be an ISO-8601 instant such as 2026-11-30T06:00:00Z");
    assertEquals(
        LocalDate.of(2026, 11, 29), body("{\"date\": \"2026-11-29\"}").requireDate("date"));
    assertRefused(
        () -> body("{\"date\": \"2026-02-30\"}").requireDate("date"),
        "bad_request",
        "date must be a date such as 2026-11-29 (yyyy-MM-dd)");
    assertTrue(body("{\"scope\": {\"a\": 1}}").requireObject("scope").isObject());
    assertRefused(
        () -> body("{\"scope\": [1]}").requireObject("scope"),
        "bad_request",
        "scope must be a JSON object");
  }

  private static JsonBody body(String json) {
    return JsonBody.parse(MAPPER, json.getBytes(StandardCharsets.UTF_8), FIELDS);
  }

  private static ApiError assertRefused(Executable call, String code) {
    ApiError error = assertThrows(ApiError.class, call);
    assertEquals(400, error.status());
    assertEquals(code, error.code());
    return error;
  }

  private static void assertRefused(Executable call, String code, String message) {
    assertEquals(message, assertRefused(call, code).getMessage());
  }
}

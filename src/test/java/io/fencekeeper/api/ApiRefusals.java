package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;

/**
 * What every refusal of the API must be, for the endpoint tests of the api packages: the status,
 * the error envelope naming what was wrong, and nothing of the node's insides (a Java type, a stack
 * trace, SQL, a file path) nor the value the caller sent.
 */
public final class ApiRefusals {

  /** What a leaking answer would hold: a Java name, a trace line, SQL, a path on the node. */
  private static final String[] INSIDES = {
    "io.fencekeeper",
    "java.",
    "exception",
    "\tat ",
    "select ",
    "insert into",
    "event_journal",
    "run_item",
    "/tmp/",
    "/home/",
    ".java"
  };

  private ApiRefusals() {}

  /**
   * {@code answer} is a {@code status} with the envelope, naming {@code field} (none when null),
   * repeating none of {@code sent}; its body as JSON.
   */
  public static JsonNode assertRefused(
      ApiTestNode.Answer answer, int status, String field, String... sent) {
    assertEquals(status, answer.status(), answer.body());
    JsonNode body = answer.tree();
    assertFalse(body.path("error").asText().isEmpty(), "an error code: " + answer.body());
    assertFalse(body.path("message").asText().isEmpty(), "a message: " + answer.body());
    if (field != null) {
      assertEquals(field, body.path("field").asText(), answer.body());
    }
    assertLeaksNothing(answer.body(), sent);
    return body;
  }

  /** {@code body} names nothing of the node's insides and repeats none of {@code sent}. */
  public static void assertLeaksNothing(String body, String... sent) {
    String lower = body.toLowerCase(Locale.ROOT);
    for (String inside : INSIDES) {
      assertFalse(lower.contains(inside), "the answer shows '" + inside + "': " + body);
    }
    for (String value : sent) {
      assertFalse(body.contains(value), "the answer repeats '" + value + "': " + body);
    }
  }
}

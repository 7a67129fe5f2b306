package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.cli.AuditCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Issue 25, item 7: a worker id with control characters is refused by every lease command and the
 * claims, and free text that holds them (an error, a reason, a provider reference) reaches no
 * export raw: the CSV report, the JSON lines report and the {@code audit} command escape them.
 */
class ControlCharactersTest {

  private final ApiTestNode api = ApiTestNode.get();

  /** The review's worker id: NUL, an ANSI colour sequence and a line break. */
  static final String WORKER = "a\u0000\u001b[31mb\n";

  static final String WORKER_JSON = "a\\u0000\\u001b[31mb\\n";

  @Test
  void aWorkerIdWithControlCharactersIsRefusedByEveryLeaseCommand() {
    String runId = api.createRun(ApiTestNode.newJob("ctl-worker"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    long token = api.claim(item, "w-ok");
    String holder = "{\"workerId\":\"" + WORKER_JSON + "\",\"token\":" + token;
    String[][] commands = {
      {item + "/claim", "{\"workerId\":\"" + WORKER_JSON + "\",\"leaseMillis\":1000}"},
      {
        "/api/runs/" + seg(runId) + "/claim-next",
        "{\"workerId\":\"" + WORKER_JSON + "\",\"leaseMillis\":1000}"
      },
      {item + "/renew", holder + ",\"leaseMillis\":1000}"},
      {item + "/effect", holder + ",\"outcome\":{\"kind\":\"APPLIED\"}}"},
      {item + "/ambiguous", holder + ",\"reason\":\"timeout\"}"},
      {item + "/complete", holder + "}"},
      {item + "/fail", holder + ",\"error\":\"x\"}"},
      {item + "/release", holder + "}"},
      {item + "/claim", "{\"workerId\":\"bidi\\u202eevil\",\"leaseMillis\":1000}"},
    };
    for (String[] command : commands) {
      ApiTestNode.Answer answer = api.post(command[0], command[1]);
      assertEquals(400, answer.status(), command[0] + ": " + answer.body());
      assertEquals("workerId", answer.tree().path("field").asText(), command[0]);
      assertTrue(answer.tree().path("message").asText().contains("control characters"));
    }
    JsonNode view = api.get(item).tree();
    assertEquals("w-ok", view.path("owner").asText(), "the lease is untouched");
    assertEquals(token, view.path("token").asLong());
    assertEquals(1, api.get(item + "/audit").tree().path("events").size(), "only the claim");
  }

  /**
   * The same claim as raw bytes: once with the control characters escaped as JSON must write them
   * (refused, naming workerId), once with them raw in the string (not JSON at all); neither answer
   * carries them back, and the item is untouched.
   */
  @Test
  void aRawClaimWithControlCharactersIsRefusedWithoutEchoingThem() {
    String runId = api.createRun(ApiTestNode.newJob("ctl-raw"), 1);
    String item = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    String escaped =
        api.rawPost(
            item + "/claim",
            ("{\"workerId\":\"" + WORKER_JSON + "\",\"leaseMillis\":1000}")
                .getBytes(StandardCharsets.UTF_8));
    assertTrue(escaped.startsWith("HTTP/1.1 400"), escaped);
    assertTrue(escaped.contains("\"field\":\"workerId\""), escaped);
    byte[] raw =
        ("{\"workerId\":\"" + WORKER + "\",\"leaseMillis\":1000}").getBytes(StandardCharsets.UTF_8);
    String unescaped = api.rawPost(item + "/claim", raw);
    assertTrue(unescaped.startsWith("HTTP/1.1 400"), unescaped);
    assertTrue(unescaped.contains("\"error\":\"malformed_json\""), unescaped);
    for (String answer : List.of(escaped, unescaped)) {
      String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
      assertNoRawControl("the answer", body);
      assertFalse(body.contains("[31m"), body);
    }
    assertEquals("PENDING", api.get(item).tree().path("status").asText());
    assertEquals(0, api.get(item + "/audit").tree().path("events").size());
  }

  @Test
  void controlCharactersInFreeTextReachNoExportRaw() throws Exception {
    String runId = api.createRun(ApiTestNode.newJob("ctl-export"), 1);
    String itemId = ApiTestNode.itemId(runId, 1);
    String item = "/api/items/" + seg(itemId);
    long token = api.claim(item, "w-1");
    String error = "boom\u001b[31m\r\nforged,line\u0085\u202e";
    ApiTestNode.Answer failed =
        api.post(
            item + "/fail",
            "{\"workerId\":\"w-1\",\"token\":"
                + token
                + ",\"error\":\"boom\\u001b[31m\\r\\nforged,line\\u0085\\u202e\","
                + "\"retryable\":false}");
    assertEquals(200, failed.status(), failed.body());
    assertNoRawControl("the item view", failed.body());
    assertEquals(error, failed.tree().path("lastError").asText(), "JSON keeps the value");

    ApiTestNode.Answer csv = api.get("/api/runs/" + seg(runId) + "/report?format=csv");
    assertEquals(200, csv.status());
    assertNoRawControl("the CSV report", csv.body());
    String[] lines = csv.body().split("\r\n");
    assertEquals(2, lines.length, "one line per item: " + csv.body());
    assertTrue(
        lines[1].contains("boom\\u001b[31m\\u000d\\u000aforged,line\\u0085\\u202e"), lines[1]);

    ApiTestNode.Answer jsonl = api.get("/api/runs/" + seg(runId) + "/report?format=jsonl");
    assertEquals(200, jsonl.status());
    assertNoRawControl("the JSON lines report", jsonl.body());
    assertEquals(
        error, api.json.readTree(jsonl.body().strip()).path("lastError").asText(), jsonl.body());

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream saved = System.out;
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      assertEquals(
          0,
          new CommandLine(new AuditCommand())
              .execute("--url", api.base, "--token", ApiTestNode.TOKEN, itemId));
    } finally {
      System.setOut(saved);
    }
    String audit = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(audit.contains("AttemptFailed"), audit);
    assertNoRawControl("the audit command", audit.replace(System.lineSeparator(), " "));
  }

  /** No C0 or C1 control (but the line ends an export uses), no DEL, no bidirectional control. */
  static void assertNoRawControl(String where, String text) {
    String withoutLineEnds = text.replace("\r\n", " ").replace("\n", " ");
    for (int i = 0; i < withoutLineEnds.length(); i++) {
      char c = withoutLineEnds.charAt(i);
      assertFalse(
          Character.isISOControl(c) || (c >= 0x202a && c <= 0x202e),
          where + " holds U+" + Integer.toHexString(c) + " raw at " + i + ": " + text);
    }
  }
}

package io.fencekeeper.api.runs;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.ApiTestNode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A run's report, streamed as CSV or JSON lines: one line per item, whatever the run's size. */
class RunReportTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void theReportHasOneLinePerItemWithStatusAttemptsEffectAndProviderReference() throws Exception {
    String runId = api.createRun(ApiTestNode.newJob("report"), 3);
    String done = "/api/items/" + seg(ApiTestNode.itemId(runId, 1));
    long token =
        api.post(done + "/claim", "{\"workerId\":\"w-r\",\"leaseMillis\":30000}")
            .tree()
            .path("token")
            .asLong();
    api.post(
        done + "/effect",
        "{\"workerId\":\"w-r\",\"token\":"
            + token
            + ",\"outcome\":{\"kind\":\"APPLIED\",\"providerReference\":\"ref-42\","
            + "\"detail\":\"wrote off 12, twice \\\"checked\\\"\"}}");
    assertEquals(
        200,
        api.post(done + "/complete", "{\"workerId\":\"w-r\",\"token\":" + token + "}").status());
    String failed = "/api/items/" + seg(ApiTestNode.itemId(runId, 2));
    long token2 =
        api.post(failed + "/claim", "{\"workerId\":\"w-r\",\"leaseMillis\":30000}")
            .tree()
            .path("token")
            .asLong();
    api.post(
        failed + "/fail",
        "{\"workerId\":\"w-r\",\"token\":"
            + token2
            + ",\"error\":\"=HYPERLINK(\\\"x\\\"), refused\",\"retryable\":false}");

    ApiTestNode.Answer csv = api.get("/api/runs/" + seg(runId) + "/report?format=csv");
    assertEquals(200, csv.status(), csv.body());
    assertEquals("text/csv; charset=UTF-8", csv.headers().firstValue("Content-Type").orElse(""));
    assertEquals(
        "attachment; filename=\"" + runId.replace('/', '-') + "-report.csv\"",
        csv.headers().firstValue("Content-Disposition").orElse(""));
    List<String> lines = csv.body().lines().toList();
    assertEquals(
        "itemId,status,attempt,maxAttempts,effect,outcome,providerReference,lastError,"
            + "closedReason,token,idempotencyKey",
        lines.get(0));
    assertEquals(4, lines.size(), csv.body());
    assertEquals(
        ApiTestNode.itemId(runId, 1) + ",DONE,1,5,RECORDED,APPLIED,ref-42,,,1," + key(runId, 1),
        lines.get(1));
    // a provider's text cannot become a spreadsheet formula; quotes and commas are escaped
    assertEquals(
        ApiTestNode.itemId(runId, 2)
            + ",FAILED,1,5,NONE,,,\"'=HYPERLINK(\"\"x\"\"), refused\",,1,"
            + key(runId, 2),
        lines.get(2));
    assertTrue(lines.get(3).startsWith(ApiTestNode.itemId(runId, 3) + ",PENDING,0,"), lines.get(3));

    ApiTestNode.Answer jsonl = api.get("/api/runs/" + seg(runId) + "/report?format=jsonl");
    assertEquals(200, jsonl.status());
    List<JsonNode> items = jsonl.body().lines().map(line -> tree(line)).toList();
    assertEquals(3, items.size());
    assertEquals("ref-42", items.get(0).path("providerReference").asText());
    assertEquals(key(runId, 1), items.get(0).path("idempotencyKey").asText());
    assertEquals("=HYPERLINK(\"x\"), refused", items.get(1).path("lastError").asText());
    assertEquals("PENDING", items.get(2).path("status").asText());
  }

  @Test
  void aRunLargerThanAPageIsReportedWholeAndInScopeOrder() {
    int size = RunReport.PAGE + 37;
    String runId = api.createRun(ApiTestNode.newJob("report-pages"), size);
    ApiTestNode.Answer jsonl = api.get("/api/runs/" + seg(runId) + "/report?format=jsonl");
    List<String> ids =
        jsonl.body().lines().map(line -> tree(line).path("itemId").asText()).toList();
    assertEquals(size, ids.size());
    for (int i = 0; i < size; i++) {
      assertEquals(ApiTestNode.itemId(runId, i + 1), ids.get(i));
    }
  }

  @Test
  void aBadFormatOrAnUnknownRunIsRefusedBeforeStreaming() {
    String runId = api.createRun(ApiTestNode.newJob("report-bad"), 1);
    ApiTestNode.Answer bad = api.get("/api/runs/" + seg(runId) + "/report?format=xlsx");
    assertEquals(400, bad.status());
    assertEquals("format", bad.tree().path("field").asText());
    ApiTestNode.Answer unknown = api.get("/api/runs/" + seg("nope/2026-11-29") + "/report");
    assertEquals(404, unknown.status());
  }

  private JsonNode tree(String line) {
    try {
      return api.json.readTree(line);
    } catch (Exception e) {
      throw new AssertionError("not JSON: " + line, e);
    }
  }

  /** The idempotency key the item's own page names (what every write of the item carries). */
  private String key(String runId, int account) {
    String itemId = ApiTestNode.itemId(runId, account);
    return api.get("/api/items/" + seg(itemId)).tree().path("idempotencyKey").asText();
  }
}

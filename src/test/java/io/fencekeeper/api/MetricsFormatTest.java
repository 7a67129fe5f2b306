package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.ProviderError;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * GET /metrics is valid Prometheus text and carries the figures of docs/design.md, "Observability".
 */
class MetricsFormatTest {

  private static final Pattern SAMPLE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)");
  private static final Pattern META =
      Pattern.compile("# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)");

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void everyLineIsASampleOrHelpOrTypeAndCountersEndInTotal() {
    String runId = api.createRun(ApiTestNode.newJob("metrics"), 2);
    api.post(
        "/api/items/" + seg(ApiTestNode.itemId(runId, 1)) + "/claim",
        "{\"workerId\":\"w\",\"leaseMillis\":30000}");
    api.post(
        "/api/items/" + seg(ApiTestNode.itemId(runId, 1)) + "/complete",
        "{\"workerId\":\"w\",\"token\":0}");
    api.metrics.providerCall("apply", Duration.ofMillis(12), null);
    api.metrics.providerCall(
        "apply",
        Duration.ofMillis(3),
        new ProviderError.Throttled(Duration.ofSeconds(1), "slow down"));

    ApiTestNode.Answer scrape = api.get("/metrics");
    assertEquals(200, scrape.status());
    assertTrue(scrape.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
    Map<String, String> types = new HashMap<>();
    Set<String> helps = new HashSet<>();
    Set<String> samples = new HashSet<>();
    for (String line : scrape.body().split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      Matcher meta = META.matcher(line);
      if (meta.matches()) {
        if (meta.group(1).equals("TYPE")) {
          types.put(meta.group(2), meta.group(3));
        } else {
          helps.add(meta.group(2));
        }
        continue;
      }
      Matcher sample = SAMPLE.matcher(line);
      assertTrue(sample.matches(), "not a sample line: " + line);
      samples.add(sample.group(1));
    }
    for (Map.Entry<String, String> type : types.entrySet()) {
      assertTrue(helps.contains(type.getKey()), "no HELP for " + type.getKey());
      if (type.getValue().equals("counter")) {
        assertTrue(type.getKey().endsWith("_total"), "counter without _total: " + type.getKey());
      }
    }
    String body = scrape.body();
    assertTrue(body.contains("fencekeeper_items{run=\"" + runId + "\",status=\"pending\"}"), body);
    assertTrue(body.contains("fencekeeper_backlog_age_seconds{run=\"" + runId + "\"}"), body);
    assertTrue(samples.contains("fencekeeper_claims_total"), body);
    // one name per concept, from the journal: the run view's counters
    assertTrue(samples.contains("fencekeeper_run_stale_rejections_total"), body);
    assertTrue(samples.contains("fencekeeper_run_takeovers_total"), body);
    assertTrue(samples.contains("fencekeeper_run_reconciliations_total"), body);
    assertTrue(samples.contains("fencekeeper_run_throttled_answers_total"), body);
    assertTrue(samples.contains("fencekeeper_run_attempts_total"), body);
    assertTrue(samples.contains("fencekeeper_run_quarantines_total"), body);
    assertTrue(
        body.contains("fencekeeper_items{run=\"" + runId + "\",status=\"quarantined\"}"), body);
    assertTrue(samples.contains("fencekeeper_item_command_seconds_count"), body);
    assertTrue(samples.contains("fencekeeper_provider_call_seconds_count"), body);
    assertTrue(samples.contains("fencekeeper_provider_throttles_total"), body);
    assertTrue(samples.contains("fencekeeper_governor_cap"), body);
  }
}

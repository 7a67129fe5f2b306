package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.nodeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What every fault test asserts once its run has ended, as a user would check it: the run's final
 * state; at most one effect per idempotency key at the provider, and exactly one for every DONE
 * item that needed one; no item lost (every item of the run answers, and the run's counts add up to
 * its items); no item quarantined (no poison here, so a quarantine is an innocent one); and the
 * run's counters, over HTTP and in {@code /metrics}, equal to the journal's events counted here
 * without the product's code.
 */
final class FaultOutcome {

  private FaultOutcome() {}

  /**
   * Asserts all of the above for a run that ended in {@code expected}, reading the counters from
   * {@code survivor}; returns the journal's counts for the test's printout.
   */
  static JournalCounts assertHeld(
      ProcessCluster cluster,
      ProcessCluster.NodeProcess survivor,
      RunView ended,
      RunState expected,
      String job,
      List<AccountCursor> accounts)
      throws Exception {
    assertEquals(expected, ended.state(), ended.toString());
    Map<String, Integer> effects = cluster.ledger();
    Map<WorkItem.Status, Integer> statuses = new TreeMap<>();
    Map<ItemId, ItemView> views =
        ClusterFixture.views(cluster.client, ClusterFixture.itemIds(job, accounts));
    for (Map.Entry<ItemId, ItemView> entry : views.entrySet()) {
      ItemId id = entry.getKey();
      ItemView seen = entry.getValue();
      statuses.merge(seen.status(), 1, Integer::sum);
      int count = effects.getOrDefault(id.idempotencyKey(), 0);
      assertTrue(count <= 1, count + " effects at the provider for " + id);
      if (seen.status() == WorkItem.Status.DONE) {
        boolean nothingToDo = seen.effectOutcome().kind() == WorkItem.OutcomeKind.NOTHING_TO_DO;
        assertEquals(nothingToDo ? 0 : 1, count, "effects at the provider for DONE " + id);
      }
    }
    var counts = ended.counts();
    assertEquals(accounts.size(), counts.total(), "the run counts every item: " + counts);
    assertEquals(
        counts.total(),
        counts.pending()
            + counts.leased()
            + counts.done()
            + counts.failed()
            + counts.closed()
            + counts.quarantined(),
        "no item is lost between the run's counts: " + counts);
    assertEquals(
        counts.done(),
        (long) statuses.getOrDefault(WorkItem.Status.DONE, 0),
        "the items DONE are the run's done count: " + statuses);
    if (expected == RunState.SUCCEEDED) {
      assertEquals(accounts.size(), counts.done(), "every item DONE: " + statuses);
    }

    JournalCounts journal = JournalCounts.of(cluster.client, job, accounts);
    assertEquals(List.of(), journal.quarantined(), "no innocent item is quarantined");
    assertEquals(0, ended.quarantines(), "the run counts no quarantine: " + ended);
    Map<String, Long> fromJournal = journal.asCounters();
    assertEquals(fromJournal, viewCounters(survivor, ended.runId()), "the run view vs the journal");
    assertEquals(fromJournal, metricCounters(survivor, ended.runId()), "/metrics vs the journal");
    return journal;
  }

  /** The counters as the journal has them, counted here without the product's own code. */
  record JournalCounts(
      long staleRejections,
      long takeovers,
      long reconciliations,
      long throttledAnswers,
      long claims,
      Map<String, Long> staleByNode,
      List<String> quarantined) {

    static JournalCounts of(FencekeeperNode via, String job, List<AccountCursor> accounts)
        throws Exception {
      long stale = 0;
      long takeovers = 0;
      long reconciliations = 0;
      long throttled = 0;
      long claims = 0;
      Map<String, Long> staleByNode = new LinkedHashMap<>();
      List<String> quarantined = new ArrayList<>();
      for (Map.Entry<ItemId, List<ItemAudit.Entry>> trail :
          ClusterFixture.trails(via, ClusterFixture.itemIds(job, accounts)).entrySet()) {
        ItemId id = trail.getKey();
        for (ItemAudit.Entry entry : trail.getValue()) {
          WorkItem.Event event = entry.event();
          if (event instanceof WorkItem.StaleCommandRejected rejected) {
            stale++;
            if (rejected.workerId() != null) {
              staleByNode.merge(nodeOf(rejected.workerId()), 1L, Long::sum);
            }
          } else if (event instanceof WorkItem.LeaseGranted granted) {
            claims++;
            takeovers += granted.previousOwner() != null ? 1 : 0;
          } else if (event instanceof WorkItem.ItemCompleted completed) {
            reconciliations += completed.reconciled() ? 1 : 0;
            throttled += completed.throttles();
          } else if (event instanceof WorkItem.EffectRecorded recorded) {
            reconciliations += recorded.reconciled() ? 1 : 0;
          } else if (event instanceof WorkItem.AttemptFailed failed) {
            throttled += failed.throttles();
          } else if (event instanceof WorkItem.ItemQuarantined q) {
            quarantined.add(id.value() + ": " + q.reason() + " " + q.lostOwners());
          }
        }
      }
      return new JournalCounts(
          stale, takeovers, reconciliations, throttled, claims, staleByNode, quarantined);
    }

    long staleFrom(String nodeAddress) {
      return staleByNode.getOrDefault(nodeAddress, 0L);
    }

    /** Once the run has ended every claim's attempt has ended: attempts = claims. */
    Map<String, Long> asCounters() {
      return Map.of(
          "staleRejections", staleRejections,
          "takeovers", takeovers,
          "reconciliations", reconciliations,
          "throttledAnswers", throttledAnswers,
          "attempts", claims);
    }
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The body of a 200, or what went wrong instead (the waits show it as their last value). */
  static String get(ProcessCluster.NodeProcess node, String path) {
    try {
      HttpResponse<String> answer =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (answer.statusCode() != 200) {
        throw new IllegalStateException(path + " answered " + answer.statusCode());
      }
      return answer.body();
    } catch (java.io.IOException | InterruptedException e) {
      throw new IllegalStateException(path + ": " + e);
    }
  }

  /** GET /api/runs/{runId}: the figures the dashboard, status and run report show. */
  static Map<String, Long> viewCounters(ProcessCluster.NodeProcess node, String runId) {
    JsonNode run;
    try {
      run =
          JSON.readTree(get(node, "/api/runs/" + URLEncoder.encode(runId, StandardCharsets.UTF_8)));
    } catch (RuntimeException | java.io.IOException e) {
      return Map.of(e.toString(), -1L);
    }
    Map<String, Long> counters = new LinkedHashMap<>();
    for (String name :
        List.of(
            "staleRejections", "takeovers", "reconciliations", "throttledAnswers", "attempts")) {
      counters.put(name, run.path(name).asLong(-1));
    }
    return counters;
  }

  /** GET /metrics: the run's counters as Prometheus scrapes them. */
  static Map<String, Long> metricCounters(ProcessCluster.NodeProcess node, String runId) {
    String text;
    try {
      text = get(node, "/metrics");
    } catch (RuntimeException e) {
      return Map.of(e.toString(), -1L);
    }
    Map<String, String> names =
        Map.of(
            "staleRejections", "fencekeeper_run_stale_rejections_total",
            "takeovers", "fencekeeper_run_takeovers_total",
            "reconciliations", "fencekeeper_run_reconciliations_total",
            "throttledAnswers", "fencekeeper_run_throttled_answers_total",
            "attempts", "fencekeeper_run_attempts_total");
    Map<String, Long> counters = new LinkedHashMap<>();
    names.forEach(
        (counter, metric) -> {
          Matcher m =
              Pattern.compile(
                      "(?m)^"
                          + metric
                          + "\\{run=\""
                          + Pattern.quote(runId)
                          + "\",?\\} ([0-9.eE+]+)$")
                  .matcher(text);
          counters.put(counter, m.find() ? (long) Double.parseDouble(m.group(1)) : -1L);
        });
    return counters;
  }
}

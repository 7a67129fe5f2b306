package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.ledger;
import static io.fencekeeper.provider.ProviderTestSupport.raw;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.SimOverHttpTest;
import io.fencekeeper.provider.http.HttpProtocol;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The ledger is how every end-to-end test counts effects, so its answers must be exact. */
class SimProviderLedgerTest extends SimOverHttpTest {

  SimProviderLedgerTest() {
    super(1L);
  }

  @Test
  void repeatedKeyIsReplayedNotAppliedTwice() {
    ItemId item = item("a-1");

    Receipt first = result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));
    Receipt repeat = result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 2)));

    assertEquals(Receipt.APPLIED, first.status());
    assertEquals(Receipt.REPLAYED, repeat.status());
    assertEquals(first.effectId(), repeat.effectId());
    assertEquals(first.appliedAt(), repeat.appliedAt());
    JsonNode ledger = ledger(sim.baseUrl());
    assertEquals(1, ledger.get("effects").get(item.idempotencyKey()).asInt());
    assertEquals(2, ledger.get("requests").asLong());
  }

  @Test
  void ledgerAnswersExactlyEffectsPerKeyAndRequestCount() {
    ItemId one = item("a-2");
    ItemId two = item("a-3");
    result(provider.apply(cleanup(one, writeOff(1), one.idempotencyKey(), 1)));
    result(provider.apply(cleanup(two, writeOff(1), two.idempotencyKey(), 1)));
    result(provider.apply(cleanup(two, writeOff(1), two.idempotencyKey(), 1)));

    JsonNode ledger = ledger(sim.baseUrl());

    List<String> fields = new ArrayList<>();
    ledger.fieldNames().forEachRemaining(fields::add);
    assertEquals(List.of("effects", "requests", "peakInFlight"), fields);
    assertEquals(
        Map.of(one.idempotencyKey(), 1, two.idempotencyKey(), 1),
        Map.of(
            one.idempotencyKey(), ledger.get("effects").get(one.idempotencyKey()).asInt(),
            two.idempotencyKey(), ledger.get("effects").get(two.idempotencyKey()).asInt()));
    assertEquals(2, ledger.get("effects").size());
    assertEquals(3, ledger.get("requests").asLong());
  }

  @Test
  void theSimMeasuresCallsInFlightAtOnceAndPerSecondWhereTheyLand() throws Exception {
    sim.setFaults(SimFaults.NONE.withLatency(300, 0));
    List<CompletableFuture<Plan>> plans = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      plans.add(provider.plan(item("p-" + i)).toCompletableFuture());
    }
    for (CompletableFuture<Plan> plan : plans) {
      plan.get(10, TimeUnit.SECONDS);
    }
    result(provider.plan(item("p-after")));

    assertEquals(5, ledger(sim.baseUrl()).get("peakInFlight").asInt());
    assertEquals(5, sim.peakInFlight());
    JsonNode stats =
        HttpProtocol.json().readTree(raw(sim.baseUrl(), "GET", "/admin/stats", null).body());
    assertEquals(0, stats.get("inFlight").asInt(), "every answer ended its request");
    assertEquals(5, stats.get("peakInFlight").asInt());
    long perSecond = 0;
    for (JsonNode count : stats.get("requestsPerSecond")) {
      perSecond += count.asLong();
    }
    assertEquals(6, perSecond, "every /v1 request counted in the second it arrived");
    assertEquals(204, raw(sim.baseUrl(), "POST", "/admin/reset", null).statusCode());
    assertEquals(0, sim.peakInFlight());
  }

  @Test
  void aCallerNeverHasItsAnswerWhileTheSimStillCountsItsRequest() {
    // else a caller that starts its next call at once is counted twice, and a budget looks broken
    for (int i = 0; i < 300; i++) {
      result(provider.plan(item("q-" + i)));
      assertEquals(0, sim.requestsInFlight(), "after answer " + i);
    }
  }

  @Test
  void resetClearsTheLedgerBetweenRuns() {
    ItemId item = item("a-4");
    result(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)));

    assertEquals(204, raw(sim.baseUrl(), "POST", "/admin/reset", null).statusCode());

    assertEquals(0, ledger(sim.baseUrl()).get("effects").size());
    assertEquals(0, ledger(sim.baseUrl()).get("requests").asLong());
    assertTrue(result(provider.lookup(item, item.idempotencyKey())).isEmpty());
  }

  @Test
  void planIsTheSameOnEveryCallAndSomeAccountsHaveNothingToDo() {
    int nothingToDo = 0;
    for (int i = 0; i < 40; i++) {
      ItemId item = item("acct-" + i);
      Plan plan = result(provider.plan(item));
      assertEquals(plan, result(provider.plan(item)), "plan for " + item);
      if (plan.nothingToDo()) {
        nothingToDo++;
      } else {
        assertTrue(plan.amountMinor() > 0, "a cleanup moves a positive amount: " + plan);
      }
    }
    assertTrue(nothingToDo > 0 && nothingToDo < 40, nothingToDo + " of 40 had nothing to do");
  }

  @Test
  void requestWithoutIdempotencyKeyIsRefusedAndAppliesNothing() {
    var response =
        raw(sim.baseUrl(), "POST", "/v1/cleanups", "{\"accountId\":\"a-5\",\"action\":\"x\"}");

    assertEquals(400, response.statusCode());
    assertTrue(response.body().contains("Idempotency-Key"), response.body());
    assertEquals(0, ledger(sim.baseUrl()).get("effects").size());
  }

  @Test
  void simProviderCommandTakesEveryFaultFlag() {
    SimProviderCommand command = new SimProviderCommand();
    new CommandLine(command)
        .parseArgs(
            "--port",
            "0",
            "--latency-ms",
            "5",
            "--jitter-ms",
            "6",
            "--timeout-after-accept",
            "0.1",
            "--hold-after-accept-ms",
            "7",
            "--throttle-per-second",
            "50",
            "--error-rate",
            "0.2",
            "--non-idempotent",
            "--ignore-fencing",
            "--seed",
            "3");

    assertEquals(new SimFaults(5, 6, 0.1, 7, 50, 0.2, true, true), command.faults());
    assertFalse(SimFaults.NONE.nonIdempotent(), "by default the sim deduplicates");
    assertFalse(SimFaults.NONE.ignoreFencing(), "by default the sim fences");
  }
}

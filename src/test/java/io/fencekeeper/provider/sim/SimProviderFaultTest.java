package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.raw;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.SimOverHttpTest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * One test per fault knob of docs/design.md, "The provider boundary", each through the real client
 * over real HTTP.
 */
class SimProviderFaultTest extends SimOverHttpTest {

  SimProviderFaultTest() {
    super(7L);
  }

  @Test
  void latencyDelaysReadsAndCleanupsAlike() {
    sim.setFaults(SimFaults.NONE.withLatency(250, 0));
    ItemId item = item("a-1");

    long planMillis = millisOf(() -> result(provider.plan(item)));
    long applyMillis =
        millisOf(
            () -> result(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1))));

    assertTrue(planMillis >= 250, "plan answered after " + planMillis + " ms");
    assertTrue(applyMillis >= 250, "apply answered after " + applyMillis + " ms");
  }

  @Test
  void jitterMakesLatencyVaryAboveTheFloor() {
    sim.setFaults(SimFaults.NONE.withLatency(20, 300));
    ItemId item = item("a-2");
    long fastest = Long.MAX_VALUE;
    long slowest = 0;
    for (int i = 0; i < 6; i++) {
      long millis = millisOf(() -> result(provider.plan(item)));
      fastest = Math.min(fastest, millis);
      slowest = Math.max(slowest, millis);
    }

    assertTrue(fastest >= 20, "fastest answer after " + fastest + " ms");
    assertTrue(slowest - fastest >= 40, "answers between " + fastest + " and " + slowest + " ms");
  }

  @Test
  void timeoutAfterAcceptAppliesTheEffectButNeverAnswers() {
    sim.setFaults(SimFaults.NONE.withTimeoutAfterAccept(1.0, 0));
    ItemId item = item("a-3");

    ProviderError first =
        failure(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)));
    // the worker reconciles, finds it, and must not apply again
    Receipt found = result(provider.lookup(item, item.idempotencyKey())).orElseThrow();

    assertInstanceOf(ProviderError.Ambiguous.class, first);
    assertEquals(item.idempotencyKey(), found.idempotencyKey());
    assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
  }

  @Test
  void throttleAnswers429WithRetryAfterInSecondsAndMillis() {
    sim.setFaults(SimFaults.NONE.withThrottlePerSecond(0.5));
    String planPath = "/v1/plans?job=j&accountId=a-4&cursor=c-1&businessDate=2026-11-29";

    HttpResponse<String> allowed = raw(sim.baseUrl(), "GET", planPath, null);
    HttpResponse<String> refused = raw(sim.baseUrl(), "GET", planPath, null);

    assertEquals(200, allowed.statusCode());
    assertEquals(429, refused.statusCode());
    assertEquals("2", refused.headers().firstValue("Retry-After").orElseThrow());
    long millis = Long.parseLong(refused.headers().firstValue("Retry-After-Ms").orElseThrow());
    assertTrue(millis > 0 && millis <= 2000, "Retry-After-Ms " + millis);
    assertTrue(refused.body().contains("\"error\":\"throttled\""), refused.body());
  }

  @Test
  void aThrottleShareSetAtRunTimeRefusesCallsAtRandomWithARetryAfterAndAppliesNothing() {
    HttpResponse<String> put =
        raw(sim.baseUrl(), "PUT", "/admin/faults", "{\"throttleShare\": 1.0}");
    ItemId item = item("a-9");

    ProviderError plan = failure(provider.plan(item));
    ProviderError apply =
        failure(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)));

    assertEquals(200, put.statusCode(), put.body());
    for (ProviderError refused : new ProviderError[] {plan, apply}) {
      ProviderError.Throttled throttled = assertInstanceOf(ProviderError.Throttled.class, refused);
      assertEquals(Duration.ofMillis(SimFaults.RANDOM_THROTTLE_WAIT_MS), throttled.retryAfter());
    }
    assertEquals(Map.of(), sim.effects(), "a throttled cleanup applies nothing");
    HttpResponse<String> invalid =
        raw(sim.baseUrl(), "PUT", "/admin/faults", "{\"throttleShare\": 1.5}");
    assertEquals(400, invalid.statusCode());
    assertTrue(invalid.body().contains("throttleShare"), invalid.body());
  }

  @Test
  void errorRateFailsBeforeOrAfterApplyingAndOnlyLookupTellsWhich() {
    sim.setFaults(SimFaults.NONE.withErrorRate(1.0));
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < 16; i++) {
      ItemId item = item("a-5-" + i);
      keys.add(item.idempotencyKey());
      assertInstanceOf(
          ProviderError.Ambiguous.class,
          failure(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1))));
    }
    sim.setFaults(SimFaults.NONE);

    Set<String> found = new HashSet<>();
    for (int i = 0; i < 16; i++) {
      ItemId item = item("a-5-" + i);
      result(provider.lookup(item, item.idempotencyKey()))
          .ifPresent(outcome -> found.add(outcome.idempotencyKey()));
    }

    assertEquals(sim.effects().keySet(), found, "lookup finds exactly what was applied");
    assertFalse(found.isEmpty(), "some 5xx came after applying");
    assertNotEquals(keys, found, "some 5xx came before applying");
    sim.effects().values().forEach(count -> assertEquals(1, count));
  }

  @Test
  void nonIdempotentProviderAppliesARepeatTwiceButLookupFindsIt() {
    sim.setFaults(SimFaults.NONE.withNonIdempotent(true));
    ItemId item = item("a-6");

    Receipt first = result(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)));
    Receipt second = result(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 2)));

    assertEquals(Receipt.APPLIED, second.status());
    assertNotEquals(first.effectId(), second.effectId());
    assertEquals(Map.of(item.idempotencyKey(), 2), sim.effects());
    assertEquals(
        first.effectId(),
        result(provider.lookup(item, item.idempotencyKey())).orElseThrow().effectId());
  }

  @Test
  void ignoreFencingLetsAStaleTokenThrough() {
    sim.setFaults(SimFaults.NONE.withIgnoreFencing(true));
    ItemId item = item("a-7");
    result(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 5)));

    Receipt stale = result(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 3)));

    // without fencing only idempotency stands between a stale worker and the provider
    assertEquals(Receipt.REPLAYED, stale.status());
    assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
  }

  @Test
  void faultsCanBeChangedAtRunTimeThroughTheAdminEndpoint() {
    HttpResponse<String> put =
        raw(sim.baseUrl(), "PUT", "/admin/faults", "{\"errorRate\": 1.0, \"latencyMs\": 5}");
    HttpResponse<String> invalid =
        raw(sim.baseUrl(), "PUT", "/admin/faults", "{\"errorRate\": 2.0}");
    HttpResponse<String> get = raw(sim.baseUrl(), "GET", "/admin/faults", null);

    assertEquals(200, put.statusCode());
    assertEquals(400, invalid.statusCode());
    assertTrue(invalid.body().contains("errorRate"), invalid.body());
    assertTrue(get.body().contains("\"errorRate\":1.0"), get.body());
    assertInstanceOf(ProviderError.Transient.class, failure(provider.plan(item("a-8"))));
  }

  private static long millisOf(Runnable call) {
    long start = System.nanoTime();
    call.run();
    return Duration.ofNanos(System.nanoTime() - start).toMillis();
  }
}

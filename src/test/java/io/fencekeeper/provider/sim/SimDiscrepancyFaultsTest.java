package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static io.fencekeeper.provider.ProviderTestSupport.effectsPerKey;
import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.raw;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.SimOverHttpTest;
import io.fencekeeper.provider.http.HttpProtocol;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The sim's discrepancy faults, over its /admin API as an operator (or a process test) reaches
 * them: an effect lost from the ledger, an effect another system wrote under a key, and the count
 * of lookups per key that tells how often a verification asked.
 */
class SimDiscrepancyFaultsTest extends SimOverHttpTest {

  SimDiscrepancyFaultsTest() {
    super(5L);
  }

  HttpResponse<String> admin(String method, String key) {
    return raw(
        sim.baseUrl(),
        method,
        "/admin/effects/" + URLEncoder.encode(key, StandardCharsets.UTF_8),
        null);
  }

  @Test
  void aLostEffectIsNoLongerFoundNorCounted() throws Exception {
    ItemId item = item("lost-1");
    result(provider.apply(cleanup(item, writeOff(10), item.idempotencyKey(), 1)));

    HttpResponse<String> lost = admin("DELETE", item.idempotencyKey());

    assertEquals(204, lost.statusCode());
    assertEquals(Optional.empty(), result(provider.lookup(item, item.idempotencyKey())));
    assertEquals(Map.of(), effectsPerKey(sim.baseUrl()), "the ledger lost it");
    assertEquals(404, admin("DELETE", item.idempotencyKey()).statusCode(), "nothing left to lose");
  }

  @Test
  void aForeignWriteIsWhatALookupFindsAndARepeatOfTheOriginalCleanupIsRefused() throws Exception {
    ItemId item = item("foreign-1");
    Receipt ours = result(provider.apply(cleanup(item, writeOff(10), item.idempotencyKey(), 1)));

    HttpResponse<String> written = admin("POST", item.idempotencyKey());

    assertEquals(201, written.statusCode());
    JsonNode theirs = HttpProtocol.json().readTree(written.body());
    assertNotEquals(ours.effectId(), theirs.get("effectId").asText());
    Receipt found = result(provider.lookup(item, item.idempotencyKey())).orElseThrow();
    assertEquals(theirs.get("effectId").asText(), found.effectId());
    assertEquals(Map.of(item.idempotencyKey(), 2), effectsPerKey(sim.baseUrl()));
    // the key now holds someone else's cleanup: the same request is no longer a replay
    assertInstanceOf(
        ProviderError.Permanent.class,
        failure(provider.apply(cleanup(item, writeOff(10), item.idempotencyKey(), 2))));
  }

  @Test
  void aForeignWriteUnderAFreshKeyCreatesAnEffectFencekeeperNeverSent() throws Exception {
    ItemId item = item("foreign-2");

    assertEquals(201, admin("POST", item.idempotencyKey()).statusCode());

    assertTrue(result(provider.lookup(item, item.idempotencyKey())).isPresent());
    assertEquals(Map.of(item.idempotencyKey(), 1), effectsPerKey(sim.baseUrl()));
  }

  @Test
  void lookupsAreCountedPerKeyUntilAReset() throws Exception {
    ItemId one = item("counted-1");
    ItemId two = item("counted-2");
    result(provider.lookup(one, one.idempotencyKey()));
    result(provider.lookup(one, one.idempotencyKey()));
    result(provider.lookup(two, two.idempotencyKey()));

    JsonNode counts =
        HttpProtocol.json().readTree(raw(sim.baseUrl(), "GET", "/admin/lookups", null).body());

    assertEquals(3, counts.get("total").asLong());
    assertEquals(2, counts.get("lookups").get(one.idempotencyKey()).asLong());
    assertEquals(1, counts.get("lookups").get(two.idempotencyKey()).asLong());
    assertEquals(204, raw(sim.baseUrl(), "POST", "/admin/reset", null).statusCode());
    assertEquals(Map.of(), sim.lookups());
  }

  @Test
  void badTamperingRequestsAreRefusedAndChangeNothing() {
    assertEquals(405, admin("PUT", "fk-1").statusCode());
    assertEquals(400, raw(sim.baseUrl(), "POST", "/admin/effects/", null).statusCode());
    assertEquals(400, admin("POST", "k".repeat(256)).statusCode());
    assertEquals(Map.of(), sim.effects());
  }
}

package io.fencekeeper.provider;

import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProtocol;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A rolling upgrade from protocol 1.0 to 1.1 (docs/provider-protocol.md, "Compatibility"), for
 * real: Fencekeeper nodes of both versions sending cleanups under one key, a provider upgraded in
 * place with keys stored under 1.0 bodies, and a 1.1 client at a provider still on 1.0. Every
 * repeat is a replay, with one effect per key; none is 422 key_reused.
 */
class RollingUpgradeTest extends SimOverHttpTest {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  RollingUpgradeTest() {
    super(11L);
  }

  /** A 1.0 node's cleanup at a 1.1 provider, after and before a 1.1 node's, under one key. */
  @Test
  void a10BodyReplayedAtA11ProviderIsAReplay() throws Exception {
    ItemId upgradedFirst = somethingToDo("acct-10");
    Plan plan = result(provider.plan(upgradedFirst));
    assertNotNull(plan.currency(), "a 1.1 provider's plan names its currency");
    result(provider.apply(cleanup(upgradedFirst, plan, 1)));

    HttpResponse<String> oldNode = from10Node(upgradedFirst, plan, 2);

    assertEquals(200, oldNode.statusCode(), oldNode.body());

    ItemId oldFirst = somethingToDo("acct-20");
    Plan samePlan = result(provider.plan(oldFirst));
    assertEquals(201, from10Node(oldFirst, samePlan, 1).statusCode());

    Receipt newNode = result(provider.apply(cleanup(oldFirst, samePlan, 2)));

    assertEquals(Receipt.REPLAYED, newNode.status());
    assertEquals(
        Map.of(upgradedFirst.idempotencyKey(), 1, oldFirst.idempotencyKey(), 1), sim.effects());
  }

  /**
   * The provider is upgraded from 1.0 to 1.1 with a key stored under a 1.0 body; the 1.1 client,
   * now given a currency in the plan, sends it with its repeat, and the stored body has none.
   */
  @Test
  void a11BodyReplayedWhereA10BodyWasAppliedIsAReplay() {
    sim.setProtocol(SimProtocol.V1_0);
    ItemId item = somethingToDo("acct-30");
    Plan before = result(provider.plan(item));
    assertNull(before.currency(), "a 1.0 provider has no currency");
    result(provider.apply(cleanup(item, before, 1)));

    sim.setProtocol(SimProtocol.V1_1);
    Plan after = result(provider.plan(item));
    Receipt repeat = result(provider.apply(cleanup(item, after, 2)));

    assertNotNull(after.currency());
    assertEquals(Receipt.REPLAYED, repeat.status());
    assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
  }

  /**
   * A 1.1 client at a provider still on 1.0, which compares every field of a repeated key's body: a
   * cleanup whose answer was lost is repeated by a 1.1 node and by a 1.0 node, and both get the
   * first result back, because the 1.1 client sends exactly 1.0's body.
   */
  @Test
  void a11ClientAtA10ProviderGetsItsRepeatsReplayed() throws Exception {
    sim.setProtocol(SimProtocol.V1_0);
    sim.setFaults(SimFaults.NONE.withTimeoutAfterAccept(1.0, 0));
    ItemId item = somethingToDo("acct-40");
    Plan plan = result(provider.plan(item));

    ProviderError lost = failure(provider.apply(cleanup(item, plan, 1)));
    sim.setFaults(SimFaults.NONE);
    Receipt repeat = result(provider.apply(cleanup(item, plan, 2)));
    HttpResponse<String> oldNode = from10Node(item, plan, 3);

    assertInstanceOf(ProviderError.Ambiguous.class, lost);
    assertEquals(Receipt.REPLAYED, repeat.status());
    assertEquals(200, oldNode.statusCode(), oldNode.body());
    assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
  }

  /** An item of {@code account} for which the sim plans something to do (nine in ten do). */
  private ItemId somethingToDo(String account) {
    for (int i = 0; ; i++) {
      ItemId item = item(account + "-" + i);
      if (!result(provider.plan(item)).nothingToDo()) {
        return item;
      }
    }
  }

  private static Cleanup cleanup(ItemId item, Plan plan, long token) {
    return new Cleanup(item, plan, item.idempotencyKey(), token, Instant.now().plusSeconds(60));
  }

  /**
   * The cleanup as a Fencekeeper node of 1.0 sent it: no version, no deadline, 1.0's eight fields
   * (the plan's currency, which a 1.0 node does not know, left out).
   */
  private HttpResponse<String> from10Node(ItemId item, Plan plan, long token)
      throws IOException, InterruptedException {
    Map<String, Object> body = ProviderTestSupport.bodyOf10(item, plan);
    HttpRequest request =
        HttpRequest.newBuilder(sim.baseUrl().resolve(HttpProtocol.CLEANUPS_PATH))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .header(HttpProtocol.IDEMPOTENCY_KEY, item.idempotencyKey())
            .header(HttpProtocol.FENCING_TOKEN, Long.toString(token))
            .POST(HttpRequest.BodyPublishers.ofString(HttpProtocol.json().writeValueAsString(body)))
            .build();
    return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
  }
}

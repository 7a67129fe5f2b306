package io.fencekeeper.provider.http;

import static io.fencekeeper.provider.ProviderTestSupport.awaitCondition;
import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.ledger;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.SimOverHttpTest;
import io.fencekeeper.provider.sim.SimFaults;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * Every error class of the protocol, produced by the real simulated provider over HTTP and seen
 * through the real client: the mapping the worker's retry rules depend on.
 */
class HttpProviderErrorMappingTest extends SimOverHttpTest {

  HttpProviderErrorMappingTest() {
    super(42L);
  }

  @Test
  void providerTimeoutAfterAcceptIsAmbiguousNotFailure() {
    sim.setFaults(SimFaults.NONE.withTimeoutAfterAccept(1.0, 0));
    ItemId item = item("a-1");

    ProviderError error =
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

    assertInstanceOf(ProviderError.Ambiguous.class, error);
    // it was applied, and reconciliation can prove it
    assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
    assertTrue(result(provider.lookup(item, item.idempotencyKey())).isPresent());
  }

  @Test
  void providerHoldingPastClientTimeoutIsAmbiguousNotFailure() {
    sim.setFaults(SimFaults.NONE.withTimeoutAfterAccept(1.0, 10_000));
    ItemId item = item("a-2");
    try (HttpProvider impatient =
        HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofMillis(300))) {

      ProviderError error =
          failure(impatient.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

      assertInstanceOf(ProviderError.Ambiguous.class, error);
      assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
    }
  }

  @Test
  void throttledAnswerCarriesRetryAfterForTheGovernor() {
    sim.setFaults(SimFaults.NONE.withThrottlePerSecond(0.5));
    ItemId item = item("a-3");
    result(provider.plan(item));

    ProviderError error =
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

    Duration retryAfter = assertInstanceOf(ProviderError.Throttled.class, error).retryAfter();
    // Retry-After-Ms gives sub-second precision: the next token is due within 2 s at 0.5/s
    assertTrue(
        retryAfter.toMillis() > 0 && retryAfter.toMillis() <= 2000, "retryAfter " + retryAfter);
    assertEquals(Map.of(), sim.effects());
  }

  @Test
  void concurrentRequestWithSameKeyIsTransientKeyInUseNotASecondEffect() {
    sim.setFaults(SimFaults.NONE.withLatency(800, 0));
    ItemId item = item("a-4");
    CompletionStage<Receipt> first =
        provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1));
    awaitCondition(
        Duration.ofSeconds(5),
        () -> sim.inFlight(item.idempotencyKey()),
        "the first request is in flight");

    ProviderError second =
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

    assertInstanceOf(ProviderError.Transient.class, second);
    assertTrue(second.message().contains(HttpProtocol.KEY_IN_USE), second.message());
    assertEquals(Receipt.APPLIED, result(first).status());
    assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
  }

  @Test
  void lowerFencingTokenThanSeenIsStaleTokenNotRetry() {
    ItemId item = item("a-5");
    result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 5)));

    ProviderError error =
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 3)));

    assertEquals(new ProviderError.StaleToken(3, 5), error);
    assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
  }

  @Test
  void sameKeyWithDifferentBodyIsPermanentNotApplied() {
    ItemId item = item("a-6");
    result(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

    ProviderError error =
        failure(provider.apply(cleanup(item, writeOff(999), item.idempotencyKey(), 1)));

    assertInstanceOf(ProviderError.Permanent.class, error);
    assertTrue(error.message().contains("422"), error.message());
    assertTrue(error.message().contains(HttpProtocol.KEY_REUSED), error.message());
    assertEquals(Map.of(item.idempotencyKey(), 1), sim.effects());
  }

  @Test
  void serverErrorOnApplyIsAmbiguousBecauseItMayHaveBeenApplied() {
    sim.setFaults(SimFaults.NONE.withErrorRate(1.0));
    ItemId item = item("a-7");

    ProviderError error =
        failure(provider.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

    assertInstanceOf(ProviderError.Ambiguous.class, error);
    assertTrue(error.message().contains("503"), error.message());
  }

  @Test
  void serverErrorOnReadIsTransientNotAmbiguous() {
    sim.setFaults(SimFaults.NONE.withErrorRate(1.0));
    ItemId item = item("a-8");

    assertInstanceOf(ProviderError.Transient.class, failure(provider.plan(item)));
    assertInstanceOf(
        ProviderError.Transient.class, failure(provider.lookup(item, item.idempotencyKey())));
  }

  @Test
  void connectionRefusedIsTransientBecauseNothingWasSent() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    ItemId item = item("a-9");
    try (HttpProvider unreachable =
        HttpProvider.create(
            URI.create("http://127.0.0.1:" + closedPort),
            Duration.ofSeconds(2),
            Duration.ofSeconds(2))) {

      ProviderError error =
          failure(unreachable.apply(cleanup(item, writeOff(100), item.idempotencyKey(), 1)));

      assertInstanceOf(ProviderError.Transient.class, error);
    }
  }

  @Test
  void unknownKeyLookupIsEmptyNotAnError() {
    ItemId item = item("a-10");

    assertTrue(result(provider.lookup(item, item.idempotencyKey())).isEmpty());
    assertEquals(0, ledger(sim.baseUrl()).get("effects").size());
  }
}

package io.fencekeeper.provider;

import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.factory.ProviderFactory;
import io.fencekeeper.provider.factory.ProviderSettings;
import io.fencekeeper.provider.http.HttpProtocol;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The SPI's own promises: typed errors survive wrapping and journaling, the factory works. */
class ProviderContractTest {

  @Test
  void typedErrorSurvivesCompletionAndExecutionWrapping() {
    ProviderError throttled = new ProviderError.Throttled(Duration.ofMillis(250), "slow down");
    ProviderException failure = new ProviderException(throttled);

    assertEquals(throttled, ProviderError.from(new CompletionException(failure)));
    assertEquals(
        throttled, ProviderError.from(new ExecutionException(new CompletionException(failure))));
    assertEquals(throttled, ProviderError.from(failure));
    // a stage failed with something nobody anticipated: assume the effect may have happened
    assertInstanceOf(
        ProviderError.Ambiguous.class, ProviderError.from(new IllegalStateException("bug")));
    ExecutionException fromGet =
        assertThrows(
            ExecutionException.class,
            () -> CompletableFuture.failedFuture(failure).toCompletableFuture().get());
    assertEquals(throttled, ProviderError.from(fromGet));
  }

  @Test
  void errorsPlansAndOutcomesRoundTripThroughJsonForTheJournal() throws Exception {
    ObjectMapper json = HttpProtocol.json();
    List<ProviderError> errors =
        List.of(
            new ProviderError.Throttled(Duration.ofMillis(1500), "429"),
            new ProviderError.Transient("reset"),
            new ProviderError.Permanent("422"),
            new ProviderError.Ambiguous("timeout after send"),
            new ProviderError.StaleToken(3, 5));
    for (ProviderError error : errors) {
      String text = json.writeValueAsString(error);
      assertEquals(error, json.readValue(text, ProviderError.class), text);
      assertTrue(!text.contains("io.fencekeeper"), "no class names in the journal: " + text);
    }
    Plan plan = Plan.action("write-off-residual", 1234, "write off");
    Receipt outcome =
        new Receipt("fk-1", "eff-1", Receipt.APPLIED, Instant.parse("2026-11-30T01:02:03.004Z"));
    assertEquals(plan, json.readValue(json.writeValueAsString(plan), Plan.class));
    assertEquals(outcome, json.readValue(json.writeValueAsString(outcome), Receipt.class));
  }

  @Test
  void factoryBuildsTheEmbeddedSimAndClosingItStopsTheServer() {
    ItemId item = item("a-1");
    Provider provider =
        ProviderFactory.create(
            ProviderSettings.sim().withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(5)));
    Plan plan = result(provider.plan(item));
    Receipt outcome = result(provider.apply(cleanup(item, writeOff(10), item.idempotencyKey(), 1)));
    assertEquals(outcome, result(provider.lookup(item, item.idempotencyKey())).orElseThrow());
    assertEquals(plan, result(provider.plan(item)));

    provider.close();

    assertInstanceOf(ProviderError.Transient.class, failure(provider.plan(item)));
  }

  @Test
  void settingsRefuseAnHttpProviderWithoutUrl() {
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new ProviderSettings(ProviderSettings.Kind.HTTP, null, null, null, null, 1L, null));
    assertTrue(refused.getMessage().contains("url"));
    assertEquals(ProviderSettings.Kind.JDBC, ProviderSettings.Kind.parse(" jdbc "));
  }
}

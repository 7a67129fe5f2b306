package io.fencekeeper.provider.factory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.provider.ProviderName;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The settings protocol 1.1 adds to a provider's block: its {@code clock-skew-allowance} (1 s
 * unless set, 0 to 1 minute), its {@code request-timeout}'s bound (at most 5 minutes: a cleanup's
 * deadline is at most that far ahead) and the jdbc provider's {@code jdbc.currency}; a value out of
 * bounds is refused naming its path, before the node starts.
 */
class ProviderCatalogProtocolTest {

  private static ProviderCatalog catalog(String hocon) {
    return ProviderCatalog.fromConfig(ConfigFactory.parseString(hocon));
  }

  @Test
  void eachProviderHasItsOwnClockSkewAllowanceOfOneSecondUnlessSet() {
    ProviderCatalog catalog =
        catalog(
            """
            fencekeeper.provider { kind = sim, clock-skew-allowance = 250ms }
            fencekeeper.providers {
              payments { kind = http, url = "http://b.example:9000/" }
              ledger {
                kind = jdbc, url = "jdbc:h2:mem:x", clock-skew-allowance = 0s,
                jdbc { currency = "CHF" } }
            }
            """);

    assertEquals(
        Duration.ofMillis(250), catalog.get(ProviderName.DEFAULT).settings().clockSkewAllowance());
    assertEquals(Duration.ofSeconds(1), catalog.get("payments").settings().clockSkewAllowance());
    assertEquals(Duration.ZERO, catalog.get("ledger").settings().clockSkewAllowance());
    assertEquals("CHF", catalog.get("ledger").settings().jdbc().currency());
  }

  @Test
  void anAllowanceOrACurrencyOutOfBoundsIsRefusedWithItsPath() {
    for (String allowance : new String[] {"-1s", "2m", "soon"}) {
      IllegalArgumentException refused =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  catalog(
                      "fencekeeper.provider { kind = sim }\n"
                          + "fencekeeper.providers.payments { kind = http,"
                          + " url = \"http://b.example:9000/\", clock-skew-allowance = "
                          + allowance
                          + " }"));
      assertTrue(
          refused.getMessage().startsWith("fencekeeper.providers.payments.clock-skew-allowance"),
          refused.getMessage());
    }
    IllegalArgumentException timeout =
        assertThrows(
            IllegalArgumentException.class,
            () -> catalog("fencekeeper.provider { kind = sim, request-timeout = 6m }"));
    assertTrue(
        timeout.getMessage().startsWith("fencekeeper.provider: request-timeout must be at most 5"),
        "every deadline sent is at most the request timeout ahead, which a provider must accept: "
            + timeout.getMessage());
    IllegalArgumentException currency =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                catalog(
                    """
                    fencekeeper.provider { kind = sim }
                    fencekeeper.providers.ledger {
                      kind = jdbc, url = "jdbc:h2:mem:x", jdbc { currency = "Euro" } }
                    """));
    assertTrue(currency.getMessage().contains("ISO 4217"), currency.getMessage());
  }
}

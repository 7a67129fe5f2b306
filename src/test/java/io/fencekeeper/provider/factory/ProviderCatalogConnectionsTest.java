package io.fencekeeper.provider.factory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.provider.ProviderName;
import org.junit.jupiter.api.Test;

/** Each provider's connection pool is sized by its own block's {@code http.max-connections}. */
class ProviderCatalogConnectionsTest {

  private static ProviderCatalog catalog(String hocon) {
    return ProviderCatalog.fromConfig(ConfigFactory.parseString(hocon));
  }

  @Test
  void everyProviderHasItsOwnMaxConnections() {
    ProviderCatalog catalog =
        catalog(
            """
            fencekeeper.provider { kind = http, url = "http://a.example:9000/",
              http.max-connections = 3 }
            fencekeeper.providers {
              payments { kind = http, url = "http://b.example:9000/", http.max-connections = 7 }
              ledger { kind = http, url = "http://c.example:9000/" }
              local { kind = sim, http.max-connections = 2 }
            }
            """);
    assertEquals(3, catalog.get(ProviderName.DEFAULT).settings().connectionsFor(32));
    assertEquals(7, catalog.get("payments").settings().connectionsFor(32));
    assertEquals(2, catalog.get("local").settings().connectionsFor(32));
    // without the key: one connection per worker of the node
    assertEquals(32, catalog.get("ledger").settings().connectionsFor(32));
  }

  @Test
  void aNegativeMaxConnectionsIsRefusedWithItsPath() {
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                catalog(
                    """
                    fencekeeper.provider { kind = sim }
                    fencekeeper.providers.payments {
                      kind = http, url = "http://b.example:9000/", http.max-connections = -1 }
                    """));
    assertTrue(
        refused.getMessage().startsWith("fencekeeper.providers.payments.http.max-connections"),
        refused.getMessage());
  }
}

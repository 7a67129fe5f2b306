package io.fencekeeper.provider.factory;

import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.jdbc.JdbcProvider;
import io.fencekeeper.provider.sim.SimProviderServer;
import java.util.Optional;

/**
 * The one place a provider is chosen and built, for {@code run}, {@code serve} and tests alike. The
 * caller owns what it gets and closes it.
 */
public final class ProviderFactory {

  private ProviderFactory() {}

  /**
   * A started provider; {@code sim} is the embedded simulated provider's server when the kind is
   * {@code sim}, so that its ledger (effects per key) can be read. Closing the provider closes it.
   */
  public record Started(Provider provider, Optional<SimProviderServer> sim) {}

  public static Started start(ProviderSettings settings) {
    return switch (settings.kind()) {
      case HTTP ->
          new Started(
              HttpProvider.create(
                  settings.url(), settings.connectTimeout(), settings.requestTimeout()),
              Optional.empty());
      case SIM -> {
        // the embedded default speaks real HTTP on loopback, so it exercises the very client
        // and error mapping that a production provider would
        SimProviderServer server =
            SimProviderServer.start(0, settings.simFaults(), settings.simSeed());
        yield new Started(
            HttpProvider.create(
                    server.baseUrl(), settings.connectTimeout(), settings.requestTimeout())
                .closing(server),
            Optional.of(server));
      }
      case JDBC -> new Started(JdbcProvider.start(settings.jdbc()), Optional.empty());
    };
  }

  public static Provider create(ProviderSettings settings) {
    return start(settings).provider();
  }
}

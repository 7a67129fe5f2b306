package io.fencekeeper.provider;

import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.jdbc.JdbcProvider;
import io.fencekeeper.provider.sim.SimProviderServer;

/** Builds the configured {@link Provider}; the caller owns it and closes it. */
public final class ProviderFactory {

  private ProviderFactory() {}

  public static Provider create(ProviderSettings settings) {
    return switch (settings.kind()) {
      case HTTP ->
          HttpProvider.create(settings.url(), settings.connectTimeout(), settings.requestTimeout());
      case SIM -> {
        // the embedded default speaks real HTTP on loopback, so it exercises the very client
        // and error mapping that a production provider would
        SimProviderServer server =
            SimProviderServer.start(0, settings.simFaults(), settings.simSeed());
        yield HttpProvider.create(
                server.baseUrl(), settings.connectTimeout(), settings.requestTimeout())
            .closing(server);
      }
      case JDBC -> JdbcProvider.start(settings.jdbc());
    };
  }
}

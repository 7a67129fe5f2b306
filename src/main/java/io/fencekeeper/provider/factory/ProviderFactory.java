package io.fencekeeper.provider.factory;

import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.http.StandaloneSystem;
import io.fencekeeper.provider.jdbc.JdbcProvider;
import io.fencekeeper.provider.plugin.PluginProvider;
import io.fencekeeper.provider.sim.SimProviderServer;
import java.util.Optional;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ClassicActorSystemProvider;

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

  /**
   * The provider of a node with {@code workers} workers: the http client's pool (and the embedded
   * sim's server) run on the node's actor system, with one connection per worker unless {@code
   * fencekeeper.provider.http.max-connections} says otherwise; a java plugin gets a pool of threads
   * of its own, as many as its budget's {@code max-in-flight}, or one per worker without a budget.
   * A plugin that cannot be loaded is a {@link io.fencekeeper.provider.plugin.PluginProblem}.
   */
  public static Started start(
      ProviderSettings settings, ClassicActorSystemProvider system, int workers) {
    int connections = settings.connectionsFor(workers);
    return switch (settings.kind()) {
      case HTTP ->
          new Started(
              HttpProvider.create(
                  system,
                  settings.url(),
                  settings.connectTimeout(),
                  settings.requestTimeout(),
                  connections),
              Optional.empty());
      case SIM -> {
        // the embedded default speaks real HTTP on loopback, so it exercises the very client
        // and error mapping that a production provider would
        SimProviderServer server =
            SimProviderServer.start(
                system, "127.0.0.1", 0, settings.simFaults(), settings.simSeed());
        yield new Started(
            HttpProvider.create(
                    system,
                    server.baseUrl(),
                    settings.connectTimeout(),
                    settings.requestTimeout(),
                    connections)
                .closing(server),
            Optional.of(server));
      }
      case JDBC -> new Started(JdbcProvider.start(settings.jdbc()), Optional.empty());
      case JAVA -> new Started(plugin(settings, workers), Optional.empty());
    };
  }

  private static PluginProvider plugin(ProviderSettings settings, int workers) {
    return PluginProvider.start(
        settings.plugin().providerName(),
        settings.plugin(),
        settings.requestTimeout(),
        settings.plugin().threadsFor(workers));
  }

  /**
   * A provider outside a node (tests, tools): the http client (and the sim) on a small actor system
   * of their own, terminated when the provider closes.
   */
  public static Started start(ProviderSettings settings) {
    if (settings.kind() == ProviderSettings.Kind.JDBC) {
      return new Started(JdbcProvider.start(settings.jdbc()), Optional.empty());
    }
    if (settings.kind() == ProviderSettings.Kind.JAVA) {
      return new Started(plugin(settings, HttpProvider.DEFAULT_MAX_CONNECTIONS), Optional.empty());
    }
    ActorSystem system = StandaloneSystem.start("fencekeeper-provider", 4);
    try {
      Started started = start(settings, system, HttpProvider.DEFAULT_MAX_CONNECTIONS);
      // http and sim both answer an HttpProvider; the system goes last, after the sim
      ((HttpProvider) started.provider()).closing(() -> StandaloneSystem.terminate(system));
      return started;
    } catch (RuntimeException e) {
      StandaloneSystem.terminate(system);
      throw e;
    }
  }

  public static Provider create(ProviderSettings settings) {
    return start(settings).provider();
  }
}

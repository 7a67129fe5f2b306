package io.fencekeeper.provider.check;

import io.fencekeeper.provider.factory.ProviderSettings;
import io.fencekeeper.provider.jdbc.JdbcProvider;
import io.fencekeeper.provider.plugin.PluginLoader;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.Receipt;
import io.fencekeeper.sdk.provider.check.PluginUnderCheck;
import io.fencekeeper.sdk.provider.check.ProviderUnderCheck;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The provider a configuration names, opened for {@code provider-check}: an http provider (and the
 * embedded sim, started here on a port of its own) over the wire, the jdbc provider through the
 * SPI, a java plugin loaded exactly as a node loads it, called in process. Each call within the
 * provider's request timeout.
 */
public final class ProvidersUnderCheck {

  private ProvidersUnderCheck() {}

  /**
   * Opens the provider; throws {@link io.fencekeeper.provider.plugin.PluginProblem} for a plugin
   * that cannot be loaded, {@code UnreadableAnswer} or a failure for an http provider whose
   * guarantees cannot be read.
   */
  public static ProviderUnderCheck open(ProviderSettings settings) {
    return switch (settings.kind()) {
      case HTTP ->
          HttpUnderCheck.open(settings.url(), settings.connectTimeout(), settings.requestTimeout());
      case SIM -> {
        SimProviderServer sim =
            SimProviderServer.start(0, settings.simFaults(), settings.simSeed());
        try {
          yield new Closing(
              HttpUnderCheck.open(
                  sim.baseUrl(), settings.connectTimeout(), settings.requestTimeout()),
              sim,
              "the embedded sim, ");
        } catch (RuntimeException e) {
          sim.close();
          throw e;
        }
      }
      case JDBC ->
          new InternalUnderCheck(
              JdbcProvider.start(settings.jdbc()),
              "jdbc provider " + withoutQuery(settings.jdbc().url()),
              Guarantees.ALL,
              "the jdbc provider: fence, effect and key in the target database's transactions",
              settings.requestTimeout());
      case JAVA -> {
        PluginLoader.Loaded loaded =
            PluginLoader.load(settings.plugin().providerName(), settings.plugin());
        try {
          yield new Closing(
              new PluginUnderCheck(
                  loaded.plugin(),
                  "java plugin " + loaded.className() + " from " + settings.plugin().path(),
                  settings.requestTimeout()),
              () -> PluginLoader.closeQuietly(loaded.loader()),
              "");
        } catch (RuntimeException e) {
          PluginLoader.closeQuietly(loaded.loader());
          throw e;
        }
      }
    };
  }

  /** A JDBC URL without its query, where credentials may be. */
  static String withoutQuery(String url) {
    int query = url.indexOf('?');
    return query < 0 ? url : url.substring(0, query);
  }

  /** A provider under check that closes something of its own after it. */
  private static final class Closing implements ProviderUnderCheck {
    private final ProviderUnderCheck provider;
    private final AutoCloseable after;
    private final String prefix;

    Closing(ProviderUnderCheck provider, AutoCloseable after, String prefix) {
      this.provider = provider;
      this.after = after;
      this.prefix = prefix;
    }

    @Override
    public String description() {
      return prefix + provider.description();
    }

    @Override
    public Guarantees claims() {
      return provider.claims();
    }

    @Override
    public String claimsSource() {
      return provider.claimsSource();
    }

    @Override
    public boolean comparesIdentityOnly() {
      return provider.comparesIdentityOnly();
    }

    @Override
    public Plan plan(Item item) {
      return provider.plan(item);
    }

    @Override
    public Receipt apply(Cleanup cleanup) {
      return provider.apply(cleanup);
    }

    @Override
    public Optional<Receipt> lookup(Item item, String idempotencyKey) {
      return provider.lookup(item, idempotencyKey);
    }

    @Override
    public Optional<CompletableFuture<Receipt>> applyAndAbandon(Cleanup cleanup) {
      return provider.applyAndAbandon(cleanup);
    }

    @Override
    public void close() {
      try {
        provider.close();
      } finally {
        try {
          after.close();
        } catch (Exception ignored) {
          // closing is best effort: the check has ended
        }
      }
    }
  }
}

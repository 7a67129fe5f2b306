package io.fencekeeper.verify;

import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.factory.ProviderCatalog;
import io.fencekeeper.provider.factory.ProviderFactory;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.pekko.actor.ClassicActorSystemProvider;

/**
 * The providers a node's verifications look keys up at: the ones its workers call, or, on a node
 * without workers (the keeper may live there), one built at the first lookup of its name and closed
 * with the node. An embedded {@code sim} built here is a sim of its own, as every node's embedded
 * sim is: verify against a shared provider ({@code http}) in a cluster.
 */
final class LookupProviders implements Function<String, Optional<Provider>>, AutoCloseable {

  private final ClassicActorSystemProvider system;
  private final ProviderCatalog catalog;
  private final Map<String, Provider> workers;
  private final int connections;
  private final Map<String, ProviderFactory.Started> built = new ConcurrentHashMap<>();

  LookupProviders(
      ClassicActorSystemProvider system,
      ProviderCatalog catalog,
      Map<String, Provider> workers,
      int connections) {
    this.system = system;
    this.catalog = catalog;
    this.workers = Map.copyOf(workers);
    this.connections = connections;
  }

  @Override
  public Optional<Provider> apply(String name) {
    Provider own = workers.get(name);
    if (own != null) {
      return Optional.of(own);
    }
    ProviderCatalog.Entry entry = catalog.entries().get(name);
    if (entry == null) {
      return Optional.empty();
    }
    return Optional.of(
        built
            .computeIfAbsent(
                name, n -> ProviderFactory.start(entry.settings(), system, connections))
            .provider());
  }

  @Override
  public void close() {
    built.values().forEach(started -> started.provider().close());
  }
}

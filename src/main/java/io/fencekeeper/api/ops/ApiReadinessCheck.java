package io.fencekeeper.api.ops;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;

/**
 * Pekko Management readiness: this node is ready only while its HTTP API is bound. Management
 * starts first (Cluster Bootstrap's contact points are management ports) and the node becomes an Up
 * member before the API binds, so without this check a load balancer, or a client that waited for
 * {@code /health/ready}, could be sent to a port that refuses connections. Registered in {@code
 * pekko.management.health-checks.readiness-checks} beside {@link JournalReadinessCheck}.
 */
public final class ApiReadinessCheck implements Supplier<CompletionStage<Boolean>> {

  private final ActorSystem system;

  public ApiReadinessCheck(ActorSystem system) {
    this.system = system;
  }

  @Override
  public CompletionStage<Boolean> get() {
    return CompletableFuture.completedFuture(Serving.ID.get(system).bound.get());
  }

  /** Marks this system's API bound (after its bind) or not (from its unbind on, at shutdown). */
  public static void serving(ActorSystem system, boolean bound) {
    Serving.ID.get(system).bound.set(bound);
  }

  /** One flag per actor system: two nodes in one JVM (the tests') have their own. */
  private static final class Serving implements Extension {
    static final Id ID = new Id();
    final AtomicBoolean bound = new AtomicBoolean();

    static final class Id extends AbstractExtensionId<Serving> {
      @Override
      public Serving createExtension(ExtendedActorSystem system) {
        return new Serving();
      }
    }
  }
}

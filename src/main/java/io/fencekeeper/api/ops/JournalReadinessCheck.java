package io.fencekeeper.api.ops;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * Pekko Management readiness: this node is ready when it is an Up member of the cluster and the
 * journal answers a query through the journal's own connection pool. Registered in {@code
 * pekko.management.health-checks.readiness-checks}.
 */
public final class JournalReadinessCheck implements Supplier<CompletionStage<Boolean>> {

  private static final Duration TIMEOUT = Duration.ofSeconds(3);
  private static final String PROBE_ID = "fencekeeper-readiness-probe";

  private final ActorSystem system;

  public JournalReadinessCheck(ActorSystem system) {
    this.system = system;
  }

  @Override
  public CompletionStage<Boolean> get() {
    if (Cluster.get(system).selfMember().status() != MemberStatus.up()) {
      return CompletableFuture.completedFuture(false);
    }
    JdbcReadJournal journal =
        PersistenceQuery.get(system)
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    return journal
        .currentEventsByPersistenceId(PROBE_ID, 0L, 1L)
        .completionTimeout(TIMEOUT)
        .runWith(Sink.ignore(), system)
        .handle((done, failure) -> failure == null);
  }
}

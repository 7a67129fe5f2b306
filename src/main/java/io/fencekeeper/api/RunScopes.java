package io.fencekeeper.api;

import io.fencekeeper.run.RunCoordinator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * Which staged scope ({@code run_item.scope_id}) belongs to a run. {@code RunView} does not carry
 * it, so it is read from the coordinator's journal ({@code RunCreated}); the answer never changes
 * for a run, so it is cached.
 */
final class RunScopes {

  private final ActorSystem<?> system;
  private final JdbcReadJournal readJournal;
  private final Map<String, String> scopeIds = new ConcurrentHashMap<>();

  RunScopes(ActorSystem<?> system) {
    this.system = system;
    this.readJournal =
        PersistenceQuery.get(system)
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
  }

  CompletionStage<Optional<String>> scopeIdOf(String runId) {
    String known = scopeIds.get(runId);
    if (known != null) {
      return java.util.concurrent.CompletableFuture.completedFuture(Optional.of(known));
    }
    return readJournal
        .currentEventsByPersistenceId(RunCoordinator.PERSISTENCE_ID.id(), 0L, Long.MAX_VALUE)
        .map(envelope -> envelope.event())
        .filter(event -> event instanceof RunCoordinator.RunCreated)
        .map(event -> (RunCoordinator.RunCreated) event)
        .runWith(
            Sink.foreach(created -> scopeIds.put(created.request().runId(), created.scopeId())),
            system)
        .thenApply(done -> Optional.ofNullable(scopeIds.get(runId)));
  }
}

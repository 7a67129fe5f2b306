package io.fencekeeper.item;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * An item's audit trail, read from the journal itself (not from an in-memory copy): every claim,
 * every outcome and every rejected stale command, in the order they were written.
 */
public final class ItemAudit {

  /** One journaled event of an item. */
  public record Entry(long sequenceNr, Instant at, String type, WorkItem.Event event) {}

  private final ActorSystem<?> system;
  private final JdbcReadJournal readJournal;

  public ItemAudit(ActorSystem<?> system) {
    this.system = system;
    this.readJournal =
        PersistenceQuery.get(system)
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
  }

  public CompletionStage<List<Entry>> trail(ItemId itemId) {
    return readJournal
        .currentEventsByPersistenceId(WorkItem.persistenceId(itemId).id(), 0L, Long.MAX_VALUE)
        .map(
            envelope -> {
              WorkItem.Event event = (WorkItem.Event) envelope.event();
              return new Entry(
                  envelope.sequenceNr(), event.at(), event.getClass().getSimpleName(), event);
            })
        .runWith(Sink.seq(), system);
  }
}

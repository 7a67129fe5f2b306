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

  /** The whole trail: for tests and small items; the API reads it a page at a time. */
  public CompletionStage<List<Entry>> trail(ItemId itemId) {
    return page(itemId, 0, Long.MAX_VALUE);
  }

  /** Up to {@code limit} events with sequence numbers after {@code afterSequenceNr}, in order. */
  public CompletionStage<List<Entry>> page(ItemId itemId, long afterSequenceNr, long limit) {
    long from = afterSequenceNr + 1;
    long to = limit >= Long.MAX_VALUE - from ? Long.MAX_VALUE : from + limit - 1;
    return readJournal
        .currentEventsByPersistenceId(WorkItem.persistenceId(itemId).id(), from, to)
        .map(
            envelope -> {
              WorkItem.Event event = (WorkItem.Event) envelope.event();
              return new Entry(
                  envelope.sequenceNr(), event.at(), event.getClass().getSimpleName(), event);
            })
        .runWith(Sink.seq(), system);
  }
}

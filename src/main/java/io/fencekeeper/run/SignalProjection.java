package io.fencekeeper.run;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemSignals;
import io.fencekeeper.item.WorkItem;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.Offset;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.persistence.query.Sequence;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.RestartSettings;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.RestartSource;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Reads the items' tagged events ({@link ItemSignals#TAG}) from the journal, in journal order, and
 * hands them to the coordinator in batches, which adds them to the runs' counters and persists the
 * counters with the offset they reached. So the counters are the journal's, whatever node wrote the
 * events and whichever nodes died since; after a coordinator move the projection goes on from the
 * persisted offset.
 */
final class SignalProjection {

  private SignalProjection() {}

  /** One tagged event: its place in the journal, its run, and what it adds to the counters. */
  record Signal(long offset, String runId, RunSignals delta) {}

  static UniqueKillSwitch start(
      ActorSystem<?> system, long fromOffset, ActorRef<RunCoordinator.Command> coordinator) {
    // restarted after a failure from what the coordinator last acknowledged, never counted twice
    AtomicLong acknowledged = new AtomicLong(fromOffset);
    Source<Done, ?> projection =
        RestartSource.withBackoff(
            RestartSettings.create(Duration.ofMillis(500), Duration.ofSeconds(10), 0.2),
            () ->
                journal(system)
                    .eventsByTag(ItemSignals.TAG, Offset.sequence(acknowledged.get()))
                    .map(SignalProjection::signal)
                    .groupedWithin(BATCH, Duration.ofMillis(200))
                    .mapAsync(1, batch -> hand(system, coordinator, batch))
                    .map(
                        offset -> {
                          acknowledged.set(offset);
                          return Done.getInstance();
                        }));
    return projection.viaMat(KillSwitches.single(), Keep.right()).to(Sink.ignore()).run(system);
  }

  /**
   * Reads the tagged events up to the journal's current end and hands them to the coordinator,
   * which ignores what it counted already. A run's items are all settled before the run ends, so
   * after this its counters hold every event of its items: the run ends with final counters.
   */
  static CompletionStage<Done> catchUp(
      ActorSystem<?> system, long fromOffset, ActorRef<RunCoordinator.Command> coordinator) {
    return journal(system)
        .currentEventsByTag(ItemSignals.TAG, Offset.sequence(fromOffset))
        .map(SignalProjection::signal)
        .grouped(BATCH)
        .mapAsync(1, batch -> hand(system, coordinator, batch))
        .runWith(Sink.ignore(), system);
  }

  private static final int BATCH = 1000;

  private static JdbcReadJournal journal(ActorSystem<?> system) {
    return PersistenceQuery.get(system)
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
  }

  private static Signal signal(EventEnvelope envelope) {
    return new Signal(
        ((Sequence) envelope.offset()).value(),
        runIdOf(envelope.persistenceId()).orElse(null),
        envelope.event() instanceof WorkItem.Event event ? RunSignals.of(event) : RunSignals.NONE);
  }

  /** The batch to the coordinator; the answer is the offset it has now counted up to. */
  private static CompletionStage<Long> hand(
      ActorSystem<?> system, ActorRef<RunCoordinator.Command> coordinator, List<Signal> batch) {
    return AskPattern.ask(
        coordinator,
        replyTo -> new RunCoordinator.SignalsRead(batch, replyTo),
        Duration.ofSeconds(30),
        system.scheduler());
  }

  /**
   * {@code WorkItem|job/businessDate/account/cursor} → {@code job/businessDate}; empty for a
   * persistence id that is not an item's, which counts for no run (and must not stop the stream: a
   * restart would read the same event again and again).
   */
  static Optional<String> runIdOf(String persistenceId) {
    try {
      String entityId = persistenceId.substring(persistenceId.indexOf('|') + 1);
      return Optional.of(ItemId.parse(entityId).runId());
    } catch (RuntimeException notAnItem) {
      return Optional.empty();
    }
  }
}

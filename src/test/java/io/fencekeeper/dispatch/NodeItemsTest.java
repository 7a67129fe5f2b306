package io.fencekeeper.dispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.worker.AttemptResult;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.Address;
import org.junit.jupiter.api.Test;

/**
 * What a node's dispatcher does with an item as it is paged in, handed out and comes back; and that
 * each item counts once in its shard's tally, however it got there.
 */
class NodeItemsTest {

  static final Instant NOW = Instant.parse("2026-11-30T02:00:00Z");
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Address POOL = new Address("pekko", "fencekeeper", "10.0.0.1", 25520);
  static final RunWork RUN =
      new RunWork(
          "nightly/2026-11-29",
          "scope",
          "nightly",
          LocalDate.parse("2026-11-29"),
          6,
          3,
          null,
          NOW.plusSeconds(3600),
          0);

  final NodeItems items = new NodeItems(6);

  static ScopeRows.Row row(int seq, short status) {
    return new ScopeRows.Row(seq, "acct-" + seq, "c", status);
  }

  DispatchProtocol.ShardTally tally(int shard) {
    return items.tallies(s -> true).stream()
        .filter(t -> t.shard() == shard)
        .findFirst()
        .orElseThrow();
  }

  @Test
  void cachedStatusesCountOnceAndOpenItemsAreQueued() {
    List<WorkQueue.Ref> reopen =
        items.intake(
            RUN,
            4,
            List.of(
                row(0, ScopeRows.DONE),
                row(1, ScopeRows.FAILED),
                row(2, ScopeRows.UNKNOWN),
                row(3, ScopeRows.CLOSED)),
            false);

    assertEquals(List.of(3), reopen.stream().map(WorkQueue.Ref::seq).toList(), "closed: reopen");
    assertEquals(new DispatchProtocol.ShardTally(4, 1, 1, 0, 0), tally(4));
    assertEquals(
        List.of(), items.board.drainWrites(), "nothing read from run_item is written back");
    assertEquals(1, items.queue.readyCount());

    // the same page again (the shard came back): nothing counts twice
    items.intake(RUN, 4, List.of(row(0, ScopeRows.DONE), row(1, ScopeRows.FAILED)), false);
    assertEquals(new DispatchProtocol.ShardTally(4, 1, 1, 0, 0), tally(4));
  }

  @Test
  void anAttemptsEndingSettlesOrParksTheItem() {
    items.intake(RUN, 0, List.of(row(0, ScopeRows.UNKNOWN), row(1, ScopeRows.UNKNOWN)), false);
    items.intake(RUN, 1, List.of(row(2, ScopeRows.UNKNOWN), row(3, ScopeRows.UNKNOWN)), false);
    items.queue.take(4, NOW, POOL);

    items.settled(0, new AttemptResult.Done(), NOW, LEASE, ref -> true);
    items.settled(1, new AttemptResult.Held(NOW.plusSeconds(3600)), NOW, LEASE, ref -> true);
    items.settled(2, new AttemptResult.RetryAt(NOW.plusSeconds(5)), NOW, LEASE, ref -> false);
    Optional<String> quarantined =
        items.settled(3, new AttemptResult.Quarantined("lost 2 times"), NOW, LEASE, ref -> true);

    assertEquals(new DispatchProtocol.ShardTally(0, 1, 0, 0, 0), tally(0));
    assertEquals(new DispatchProtocol.ShardTally(1, 0, 0, 0, 1), tally(1));
    assertEquals(Optional.of("lost 2 times"), quarantined);
    assertEquals(StatusBoard.WAITING, items.board.get(1));
    assertEquals(StatusBoard.READY, items.board.get(2), "its shard left: left for the next host");
    items.queue.releaseDue(NOW.plus(LEASE));
    assertEquals(
        List.of(1),
        items.queue.take(10, NOW, POOL).stream().map(WorkQueue.Ref::seq).toList(),
        "another's lease is waited out for at most one lease of this node's clock");
  }

  @Test
  void aQuarantinedItemAnOperatorRetriedIsHandedOutAgain() {
    items.intake(RUN, 0, List.of(row(0, ScopeRows.UNKNOWN)), false);
    WorkQueue.Ref ref = items.queue.take(1, NOW, POOL).get(0);
    items.settled(0, new AttemptResult.Quarantined("lost"), NOW, LEASE, r -> true);

    items.quarantined.dueForLookup(NOW);
    items.quarantineAnswered(ref, true);
    assertEquals(StatusBoard.QUARANTINED, items.board.get(0));

    items.quarantined.dueForLookup(NOW.plusSeconds(10));
    items.quarantineAnswered(ref, false);
    assertEquals(StatusBoard.READY, items.board.get(0));
    assertEquals(new DispatchProtocol.ShardTally(0, 0, 0, 0, 0), tally(0));
    assertEquals(1, items.queue.readyCount());
  }

  @Test
  void arrivalsGoAheadTheLostLeasesFirstThenTheShardsTheLostNodeWasWorkingOn() {
    NodeItems node = new NodeItems(12);
    node.intake(RUN, 0, List.of(row(0, ScopeRows.UNKNOWN), row(1, ScopeRows.UNKNOWN)), false);
    node.lostLeases(List.of(9));
    // shard 1: nothing settled yet; shard 2: two settled, then its lost node's items in hand;
    // shard 3: one of them reported in flight
    node.intake(RUN, 1, List.of(row(2, ScopeRows.UNKNOWN), row(3, ScopeRows.UNKNOWN)), true);
    node.intake(
        RUN,
        2,
        List.of(
            row(4, ScopeRows.DONE),
            row(5, ScopeRows.FAILED),
            row(6, ScopeRows.UNKNOWN),
            row(7, ScopeRows.UNKNOWN)),
        true);
    assertEquals(
        List.of(0, 1),
        node.queue.take(2, NOW, POOL).stream().map(WorkQueue.Ref::seq).toList(),
        "held until every arrival is paged in");
    node.intake(RUN, 3, List.of(row(8, ScopeRows.UNKNOWN), row(9, ScopeRows.UNKNOWN)), true);

    node.arrivalsPaged(ref -> ref.shard() != 1 || ref.seq() != 3);

    assertEquals(
        List.of(9, 6, 7, 2, 8),
        node.queue.take(10, NOW, POOL).stream().map(WorkQueue.Ref::seq).toList(),
        "the lost lease, the shard being worked on, the rest; 3's shard no longer stays here");
    assertEquals(StatusBoard.READY, node.board.get(3));
  }

  @Test
  void itemsOfAShardThatArrivedGoAheadAndAResumedRunReopensWhatIsOpen() {
    items.intake(RUN, 0, List.of(row(0, ScopeRows.UNKNOWN)), false);
    items.intake(RUN, 1, List.of(row(1, ScopeRows.UNKNOWN)), true);
    items.arrivalsPaged(ref -> true);
    assertEquals(
        List.of(1, 0), items.queue.take(2, NOW, POOL).stream().map(WorkQueue.Ref::seq).toList());

    NodeItems resumed = new NodeItems(6);
    RunWork again =
        new RunWork(
            RUN.runId(),
            RUN.scopeId(),
            RUN.job(),
            RUN.businessDate(),
            6,
            3,
            null,
            RUN.deadline(),
            1);
    List<WorkQueue.Ref> reopen =
        resumed.intake(again, 0, List.of(row(0, ScopeRows.DONE), row(1, ScopeRows.FAILED)), false);
    assertEquals(List.of(1), reopen.stream().map(WorkQueue.Ref::seq).toList());
    resumed.reopened(reopen.get(0), false, ref -> true);
    assertTrue(resumed.queue.hasReady(), "handed out again: the claim tells the truth");
  }

  /**
   * Finding 18: items the lease API settled by id (never offered from here) count where they stand
   * and leave the queue; one offered from here settles by its offer, and an open result changes
   * nothing. A row the API cached as QUARANTINED is paged in quarantined.
   */
  @Test
  void itemsSettledThroughClaimByIdCountAndLeaveTheQueue() {
    items.intake(
        RUN,
        2,
        List.of(
            row(0, ScopeRows.UNKNOWN),
            row(1, ScopeRows.UNKNOWN),
            row(2, ScopeRows.UNKNOWN),
            row(3, ScopeRows.UNKNOWN),
            row(4, ScopeRows.QUARANTINED)),
        false);
    assertEquals(new DispatchProtocol.ShardTally(2, 0, 0, 0, 1), tally(2));
    WorkQueue.Ref offered = items.queue.take(1, NOW, POOL).get(0);

    assertTrue(items.settledElsewhere(RUN.itemId("acct-1", "c"), new AttemptResult.Done()));
    assertTrue(items.settledElsewhere(RUN.itemId("acct-2", "c"), new AttemptResult.Failed("x")));
    assertTrue(
        items.settledElsewhere(RUN.itemId("acct-3", "c"), new AttemptResult.Quarantined("lost")));
    assertFalse(
        items.settledElsewhere(offered.itemId(), new AttemptResult.Done()), "settles by its offer");
    assertFalse(
        items.settledElsewhere(RUN.itemId("acct-5", "c"), new AttemptResult.Done()),
        "not paged in here: its row says");

    assertEquals(new DispatchProtocol.ShardTally(2, 1, 1, 0, 2), tally(2));
    assertEquals(0, items.queue.readyCount(), "nothing left to hand out");
    assertEquals(StatusBoard.OFFERED, items.board.get(offered.seq()));
    assertEquals(
        List.of(
            new ScopeRows.StatusWrite(1, ScopeRows.DONE),
            new ScopeRows.StatusWrite(2, ScopeRows.FAILED)),
        items.board.drainWrites());
  }
}

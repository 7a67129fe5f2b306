package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.WorkItem.Accepted;
import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.LeaseLost;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.Status;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The WorkItem entity on a real journal, through Cluster Sharding on a real node: the same tests
 * run on the embedded H2 file and on a real PostgreSQL server, each starting from an empty database
 * whose schema the node's own migrations create.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class WorkItemJournalContract {

  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration ASK = Duration.ofSeconds(10);

  Path dataDir;
  ManualClock clock;
  FencekeeperNode node;
  TestDatabases.Target database;

  abstract TestDatabases.Target database(Path dataDir);

  @BeforeAll
  void startNode() throws Exception {
    dataDir = Files.createTempDirectory("fencekeeper-journal-test");
    clock = ManualClock.at("2026-11-30T01:00:00Z");
    database = database(dataDir);
    node = TestNodes.start(database, dataDir, clock);
  }

  @AfterAll
  void stopNode() {
    if (node != null) {
      node.close();
    }
  }

  Reply ask(ItemId item, Function<ActorRef<Reply>, WorkItem.Command> command) throws Exception {
    return node.item(item)
        .<Reply>ask(command::apply, ASK)
        .toCompletableFuture()
        .get(ASK.toSeconds(), TimeUnit.SECONDS);
  }

  static ItemId item(String account) {
    return ItemId.of("payment-reconciliation", LocalDate.parse("2026-11-29"), account, "c-1");
  }

  static final EffectOutcome APPLIED = new EffectOutcome(OutcomeKind.APPLIED, "eff-9", "voided");

  @Test
  void pausedWorkerCannotCommitAfterAnotherWorkerClaimed() throws Exception {
    ItemId item = item("acct-fencing");
    Claimed a =
        assertInstanceOf(Claimed.class, ask(item, r -> new WorkItem.Claim("A", LEASE, 5, 0, r)));
    // worker A pauses past its lease; B takes the item over
    clock.advance(LEASE.plusSeconds(1));
    Claimed b =
        assertInstanceOf(Claimed.class, ask(item, r -> new WorkItem.Claim("B", LEASE, 5, 0, r)));
    assertEquals(a.token() + 1, b.token());
    assertEquals(EffectStatus.AMBIGUOUS, b.effect(), "A went silent: B must reconcile first");

    // A wakes up and tries to commit with its old token
    LeaseLost lostEffect =
        assertInstanceOf(
            LeaseLost.class,
            ask(item, r -> new WorkItem.RecordEffect(a.item().owner(), a.token(), APPLIED, r)));
    assertEquals(a.token(), lostEffect.presentedToken());
    assertEquals(b.token(), lostEffect.currentToken());
    assertInstanceOf(
        LeaseLost.class, ask(item, r -> new WorkItem.Complete(a.item().owner(), a.token(), r)));

    assertInstanceOf(
        Accepted.class,
        ask(item, r -> new WorkItem.RecordEffect(b.item().owner(), b.token(), APPLIED, r)));
    Accepted done =
        assertInstanceOf(
            Accepted.class, ask(item, r -> new WorkItem.Complete(b.item().owner(), b.token(), r)));
    assertEquals(Status.DONE, done.item().status());
    assertEquals("B", done.item().owner());

    List<ItemAudit.Entry> trail =
        new ItemAudit(node.system()).trail(item).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(
        List.of(
            "LeaseGranted",
            "LeaseGranted",
            "StaleCommandRejected",
            "LateHolderHeard", // A was lost when B took over; its first word says it lives
            "StaleCommandRejected",
            "EffectRecorded",
            "ItemCompleted"),
        trail.stream().map(ItemAudit.Entry::type).toList());
    WorkItem.LeaseGranted claimA = (WorkItem.LeaseGranted) trail.get(0).event();
    WorkItem.LeaseGranted claimB = (WorkItem.LeaseGranted) trail.get(1).event();
    assertEquals("A", claimA.workerId());
    assertEquals("B", claimB.workerId());
    assertEquals("A", claimB.previousOwner());
    WorkItem.StaleCommandRejected rejectEffect =
        (WorkItem.StaleCommandRejected) trail.get(2).event();
    WorkItem.LateHolderHeard back = (WorkItem.LateHolderHeard) trail.get(3).event();
    assertEquals("A", back.workerId());
    assertEquals(a.token(), back.token());
    assertEquals(false, back.quarantineLifted());
    WorkItem.StaleCommandRejected rejectComplete =
        (WorkItem.StaleCommandRejected) trail.get(4).event();
    assertEquals("RecordEffect", rejectEffect.command());
    assertEquals("Complete", rejectComplete.command());
    assertEquals(a.token(), rejectEffect.presentedToken());
    assertEquals(b.token(), rejectComplete.currentToken());
    assertEquals(
        List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L),
        trail.stream().map(ItemAudit.Entry::sequenceNr).toList());
  }

  @Test
  void everyCommandRoundTripsThroughTheJournal() throws Exception {
    ItemId item = item("acct-roundtrip");
    Claimed c =
        assertInstanceOf(Claimed.class, ask(item, r -> new WorkItem.Claim("w", LEASE, 3, 0, r)));
    assertInstanceOf(
        Accepted.class, ask(item, r -> new WorkItem.Renew(c.item().owner(), c.token(), LEASE, r)));
    assertInstanceOf(
        Accepted.class,
        ask(item, r -> new WorkItem.MarkAmbiguous(c.item().owner(), c.token(), "reset", r)));
    assertInstanceOf(
        Accepted.class,
        ask(item, r -> new WorkItem.Fail(c.item().owner(), c.token(), "503", true, null, r)));
    Claimed c2 =
        assertInstanceOf(Claimed.class, ask(item, r -> new WorkItem.Claim("w", LEASE, 3, 0, r)));
    assertEquals(EffectStatus.AMBIGUOUS, c2.effect());
    assertInstanceOf(
        Accepted.class, ask(item, r -> new WorkItem.Release(c2.item().owner(), c2.token(), r)));
    assertInstanceOf(Accepted.class, ask(item, r -> new WorkItem.Close("deadline", r)));
    assertInstanceOf(Accepted.class, ask(item, r -> new WorkItem.Reopen(r)));
    Claimed c3 =
        assertInstanceOf(Claimed.class, ask(item, r -> new WorkItem.Claim("w", LEASE, 3, 0, r)));
    assertInstanceOf(
        Accepted.class,
        ask(item, r -> new WorkItem.Fail(c3.item().owner(), c3.token(), "gone", false, null, r)));
    assertInstanceOf(Accepted.class, ask(item, r -> new WorkItem.Retry(r)));
    Accepted state = assertInstanceOf(Accepted.class, ask(item, r -> new WorkItem.Get(r)));
    assertEquals(Status.PENDING, state.item().status());
    assertEquals(4, state.item().token(), "three claims and one close");

    List<ItemAudit.Entry> trail =
        new ItemAudit(node.system()).trail(item).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(
        List.of(
            "LeaseGranted",
            "LeaseRenewed",
            "MarkedAmbiguous",
            "AttemptFailed",
            "LeaseGranted",
            "LeaseReleased",
            "ItemClosed",
            "ItemReopened",
            "LeaseGranted",
            "AttemptFailed",
            "RetryRequested"),
        trail.stream().map(ItemAudit.Entry::type).toList());
  }

  /**
   * After a node restart many entities recover at the same moment; each must get its own history
   * back (status and token), and its next write must land on its own next sequence number (a wrong
   * one would hit the journal's primary key or leave a gap in the audit trail).
   */
  @Test
  void manyEntitiesRecoveringAtOnceEachGetTheirOwnHistory() throws Exception {
    int items = 60;
    for (int i = 0; i < items; i++) {
      ItemId item = item("acct-recover-" + i);
      for (int k = 0; k <= i % 3; k++) {
        Claimed c =
            assertInstanceOf(
                Claimed.class, ask(item, r -> new WorkItem.Claim("w", LEASE, 9, 0, r)));
        assertInstanceOf(
            Accepted.class, ask(item, r -> new WorkItem.Release(c.item().owner(), c.token(), r)));
      }
      Claimed last =
          assertInstanceOf(Claimed.class, ask(item, r -> new WorkItem.Claim("w", LEASE, 9, 0, r)));
      assertInstanceOf(
          Accepted.class,
          ask(
              item,
              r ->
                  new WorkItem.RecordEffectAndComplete(
                      last.item().owner(), last.token(), APPLIED, r)));
    }

    // a fresh node: every entity recovers from the journal, all at once
    node.close();
    node = TestNodes.start(database, dataDir, clock);
    List<java.util.concurrent.CompletableFuture<Reply>> gets = new java.util.ArrayList<>();
    for (int i = 0; i < items; i++) {
      gets.add(
          node.item(item("acct-recover-" + i))
              .<Reply>ask(WorkItem.Get::new, ASK)
              .toCompletableFuture());
    }
    for (int i = 0; i < items; i++) {
      Accepted state =
          assertInstanceOf(Accepted.class, gets.get(i).get(ASK.toSeconds(), TimeUnit.SECONDS));
      assertEquals(Status.DONE, state.item().status(), "item " + i);
      assertEquals(i % 3 + 2, state.item().token(), "item " + i + ": claims before completion");
    }

    // a stale command is journaled: it must take the next sequence number of its own item
    for (int i = 0; i < items; i += 7) {
      ItemId item = item("acct-recover-" + i);
      assertInstanceOf(LeaseLost.class, ask(item, r -> new WorkItem.Complete("w-1", 1, r)));
      List<ItemAudit.Entry> trail =
          new ItemAudit(node.system()).trail(item).toCompletableFuture().get(10, TimeUnit.SECONDS);
      // claim and release per round, the last claim, the completion (with its effect), the stale
      int expected = 2 * (i % 3 + 1) + 2 + 1;
      assertEquals(expected, trail.size(), "item " + i);
      assertEquals("StaleCommandRejected", trail.get(expected - 1).type());
      for (int seq = 0; seq < expected; seq++) {
        assertEquals(seq + 1L, trail.get(seq).sequenceNr(), "item " + i);
      }
    }
  }

  /**
   * A caller that loops on rejected commands grows the item's journal (every rejection is audited),
   * but not its recovery: the item snapshots every 100 events, so a restart replays from the last
   * snapshot and comes back with the same state.
   */
  @Test
  void aFloodOfRejectedCommandsIsSnapshottedAndTheItemRecoversFromIt() throws Exception {
    ItemId item = item("acct-flood");
    Claimed c =
        assertInstanceOf(Claimed.class, ask(item, r -> new WorkItem.Claim("w", LEASE, 5, 0, r)));
    for (int i = 0; i < 250; i++) {
      assertInstanceOf(
          LeaseLost.class, ask(item, r -> new WorkItem.Complete("intruder", c.token(), r)));
    }
    try (java.sql.Connection db =
            java.sql.DriverManager.getConnection(
                database.url(), database.user(), database.password());
        java.sql.PreparedStatement count =
            db.prepareStatement("SELECT count(*) FROM \"snapshot\" WHERE \"persistence_id\" = ?")) {
      count.setString(1, WorkItem.persistenceId(item).id());
      try (java.sql.ResultSet rs = count.executeQuery()) {
        rs.next();
        assertTrue(rs.getInt(1) >= 1, "a snapshot bounds the replay of 251 events");
      }
    }
    node.close();
    node = TestNodes.start(database, dataDir, clock);
    Accepted after = assertInstanceOf(Accepted.class, ask(item, WorkItem.Get::new));
    assertEquals(Status.LEASED, after.item().status());
    assertEquals("w", after.item().owner());
    assertEquals(c.token(), after.item().token());
  }

  /**
   * A DONE item leaves memory at once (it is final; a later command recovers it), so a node's heap
   * holds the items in flight, not every item of the last idle timeout. An item still leased stays.
   */
  @Test
  void aDoneItemIsPassivatedAtOnceAndALeasedOneStays() throws Exception {
    ItemId done = item("acct-passivate-done");
    ItemId leased = item("acct-passivate-leased");
    Claimed c =
        assertInstanceOf(Claimed.class, ask(done, r -> new WorkItem.Claim("w", LEASE, 3, 0, r)));
    assertInstanceOf(Claimed.class, ask(leased, r -> new WorkItem.Claim("w", LEASE, 3, 0, r)));
    assertTrue(liveEntities().contains(done.value()), "started by the claim");

    assertInstanceOf(
        Accepted.class,
        ask(
            done,
            r -> new WorkItem.RecordEffectAndComplete(c.item().owner(), c.token(), APPLIED, r)));
    io.fencekeeper.testing.Await.until(
        Duration.ofSeconds(10),
        "the DONE item to be passivated (idle timeout is 15 s, so not by that)",
        () -> !liveEntities().contains(done.value()));
    assertTrue(liveEntities().contains(leased.value()), "a leased item stays in memory");

    // and it is still all there when asked again
    Accepted again = assertInstanceOf(Accepted.class, ask(done, r -> new WorkItem.Get(r)));
    assertEquals(Status.DONE, again.item().status());
    assertEquals(c.token(), again.item().token());
  }

  @Test
  void itemsReadFromTheirJournalRowsAreTheItemsTheirEntitiesAnswer() throws Exception {
    ItemId done = item("acct-trails-done");
    ItemId leased = item("acct-trails-leased");
    ItemId failed = item("acct-trails-failed");
    ItemId never = item("acct-trails-never");
    Claimed d =
        assertInstanceOf(Claimed.class, ask(done, r -> new WorkItem.Claim("T", LEASE, 5, 0, r)));
    ask(done, r -> new WorkItem.RecordEffect("T", d.token(), APPLIED, r));
    ask(done, r -> new WorkItem.Complete("T", d.token(), r));
    assertInstanceOf(Claimed.class, ask(leased, r -> new WorkItem.Claim("T", LEASE, 5, 0, r)));
    Claimed f =
        assertInstanceOf(Claimed.class, ask(failed, r -> new WorkItem.Claim("T", LEASE, 5, 0, r)));
    ask(
        failed,
        r -> new WorkItem.Fail("T", f.token(), "provider said no", true, Duration.ofMinutes(1), r));
    // a late holder's word is journaled too: the trail holds it, the item does not change
    ask(done, r -> new WorkItem.Complete("late", d.token(), r));

    List<ItemId> items = List.of(never, failed, done, leased);
    ItemTrails trails = new ItemTrails(node.system(), node.runItems().dataSource());
    List<ItemView> read = trails.views(items);

    assertEquals(items.size(), read.size());
    for (int i = 0; i < items.size(); i++) {
      ItemId id = items.get(i);
      if (id.equals(never)) {
        continue; // asking it would write nothing, but start an entity; its journal is empty
      }
      Accepted answered = assertInstanceOf(Accepted.class, ask(id, r -> new WorkItem.Get(r)));
      assertEquals(answered.item(), read.get(i), id + ": the journal's fold is the entity's item");
    }
    assertEquals(Status.PENDING, read.get(0).status(), "an item never written is pending");
    assertEquals(Status.DONE, read.get(2).status());
    for (ItemId id : List.of(done, failed)) {
      List<ItemAudit.Entry> one =
          new ItemAudit(node.system()).trail(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertEquals(
          one.stream().map(e -> e.sequenceNr() + " " + e.type() + " " + e.event()).toList(),
          trails.trails(List.of(id)).get(id).stream()
              .map(e -> e.sequenceNr() + " " + e.type() + " " + e.event())
              .toList(),
          id + ": the same trail as the read journal's");
    }
  }

  private java.util.Set<String> liveEntities() {
    try {
      org.apache.pekko.cluster.sharding.ShardRegion.CurrentShardRegionState state =
          org.apache.pekko.actor.typed.javadsl.AskPattern
              .<org.apache.pekko.cluster.sharding.typed.ClusterShardingQuery,
                  org.apache.pekko.cluster.sharding.ShardRegion.CurrentShardRegionState>
                  ask(
                      org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.get(
                              node.system())
                          .shardState(),
                      replyTo ->
                          new org.apache.pekko.cluster.sharding.typed.GetShardRegionState(
                              WorkItem.ENTITY_TYPE_KEY, replyTo),
                      ASK,
                      node.system().scheduler())
              .toCompletableFuture()
              .get(ASK.toSeconds(), TimeUnit.SECONDS);
      java.util.Set<String> ids = new java.util.HashSet<>();
      state.getShards().forEach(shard -> ids.addAll(shard.getEntityIds()));
      return ids;
    } catch (Exception e) {
      throw new IllegalStateException("could not read the shard region's state", e);
    }
  }
}

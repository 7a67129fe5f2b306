package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run is never left RUNNING with nobody dispatching it: a node's dispatcher that throws is
 * started again by the node's agent, and a run whose dispatcher keeps failing ends FAILED with the
 * reason.
 */
class DispatcherSupervisionTest {

  @TempDir Path dataDir;
  FencekeeperNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  @Test
  void aDispatcherThatKeepsFailingEndsTheRunFailedWithTheReason() throws Exception {
    node = TestNodes.start(TestDatabases.h2File(dataDir), dataDir, Clock.systemUTC());
    // a scope of three rows recorded as a run of one item: the dispatcher's status board is too
    // small for the rows it pages in, so it throws on its first page, every time it starts
    String scopeId = "broken-scope";
    ItemShards shards = new ItemShards(100);
    node.runItems()
        .stage(
            scopeId,
            0,
            List.of(
                new AccountCursor("acct-1", "c-1"),
                new AccountCursor("acct-2", "c-1"),
                new AccountCursor("acct-3", "c-1")),
            account ->
                shards.shardNumber(
                    ItemId.of(
                        "broken",
                        LocalDate.parse("2026-11-29"),
                        account.accountId(),
                        account.cursor())));
    RunRequest request =
        new RunRequest(
            "broken",
            LocalDate.parse("2026-11-29"),
            new Scope.Inline(List.of(new AccountCursor("acct-1", "c-1"))),
            Instant.now().plus(Duration.ofHours(1)),
            3,
            0);
    RunCoordinator.CreateReply created =
        AskPattern.<RunCoordinator.Command, RunCoordinator.CreateReply>ask(
                node.coordinator(),
                replyTo -> new RunCoordinator.CreateRun(request, scopeId, 1, "digest", replyTo),
                Duration.ofSeconds(10),
                node.system().scheduler())
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertInstanceOf(RunCoordinator.Created.class, created);

    RunView ended =
        Await.until(
            Duration.ofSeconds(30),
            "the run to end although its dispatcher cannot work",
            () -> node.runs().get(request.runId()).toCompletableFuture().join().orElseThrow(),
            run -> run.state().ended());
    assertEquals(RunState.FAILED, ended.state());
    assertTrue(ended.endReason().startsWith("the dispatcher failed 3 times"), ended.endReason());
    assertTrue(ended.endReason().contains("ArrayIndexOutOfBoundsException"), ended.endReason());
  }
}

package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.testing.TestDatabases;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The keeper of verifications on a real node: how a run's verifications are numbered and listed,
 * what a second request while one runs gets, and (with {@code fencekeeper.verify.when-run-ends})
 * that a run that ends verifies itself, and one that ended before the setting does not.
 */
class VerificationKeeperTest {

  VerifyFixture f;

  @BeforeEach
  void setUp() throws Exception {
    f = new VerifyFixture(TestDatabases::h2File, 3);
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  RunView finishedRun(String job, int items) throws Exception {
    RunView run = f.create(job, VerifyFixture.accounts(items));
    RunView ended = f.awaitEnded(run.runId());
    assertEquals(RunState.SUCCEEDED, ended.state());
    return ended;
  }

  @Test
  void aRunsVerificationsAreNumberedAndTheLatestComesFirst() throws Exception {
    f.startNode(4, Map.of());
    RunView run = finishedRun("numbered", 20);

    VerificationView first = f.started(run.runId(), 0, OptionalLong.empty());
    f.awaitConcluded(run.runId(), first.number());
    VerificationView second = f.started(run.runId(), 5, OptionalLong.of(8));
    f.awaitConcluded(run.runId(), second.number());

    assertEquals(1, first.number());
    assertEquals(2, second.number());
    List<VerificationView> listed =
        f.node.verifications().list(run.runId()).toCompletableFuture().join();
    assertEquals(List.of(2, 1), listed.stream().map(VerificationView::number).toList());
    assertEquals(List.of(5L, 20L), listed.stream().map(VerificationView::toCheck).toList());
    assertTrue(listed.stream().allMatch(v -> v.findings().isEmpty()), "a list has no findings");
    assertEquals(
        2,
        f.node
            .verifications()
            .get(run.runId(), 0)
            .toCompletableFuture()
            .join()
            .orElseThrow()
            .number(),
        "0 is the latest");
    assertEquals(
        List.of(2),
        f.node.verifications().latestOfEveryRun().toCompletableFuture().join().stream()
            .filter(v -> v.runId().equals(run.runId()))
            .map(VerificationView::number)
            .toList());
  }

  @Test
  void whileOneRunsTheSameRowsJoinItAndOtherRowsAreRefused() throws Exception {
    f.startNode(4, Map.of("fencekeeper.verify.max-in-flight", "1"));
    RunView run = finishedRun("busy", 8);
    f.sim.setFaults(SimFaults.NONE.withLatency(400, 0)); // eight lookups one at a time: 3 s

    VerificationView running = f.started(run.runId(), 0, OptionalLong.empty());
    VerificationKeeper.StartReply same = f.verify(run.runId(), 0, OptionalLong.empty());
    VerificationKeeper.StartReply other = f.verify(run.runId(), 3, OptionalLong.of(1));

    assertEquals(
        running.number(),
        assertInstanceOf(VerificationKeeper.AlreadyRunning.class, same).view().number());
    assertEquals(
        "verification_running", assertInstanceOf(VerificationKeeper.Refused.class, other).error());
    assertEquals("AGREE", f.awaitConcluded(run.runId(), running.number()).verdict());
    assertEquals(2, f.started(run.runId(), 3, OptionalLong.of(1)).number());
  }

  @Test
  void withWhenRunEndsARunThatEndsVerifiesItselfAndOneThatEndedBeforeDoesNot() throws Exception {
    f.startNode(4, Map.of());
    RunView before = finishedRun("ended-before", 5);
    f.node.close();
    f.startNode(4, Map.of("fencekeeper.verify.when-run-ends", "true"));

    RunView after = finishedRun("ended-after", 12);

    VerificationView auto = f.awaitConcluded(after.runId(), 0);
    assertTrue(auto.auto(), "requested by the run's end, not an operator");
    assertEquals("AGREE", auto.verdict());
    assertEquals(12, auto.checked());
    assertTrue(
        f.node.verifications().list(before.runId()).toCompletableFuture().join().isEmpty(),
        "a run that ended before the setting is left alone");
  }
}

package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.RunCoordinator.ControlRefused;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's decisions without an actor: a create of an existing run is the same run or a
 * conflict naming what differs; a resume, a cancel and a prune are refused with the reason an
 * operator reads; the deadline is the coordinator's clock's; the journal's signals are counted
 * once; a filed run is forgotten only as it was written.
 */
class RunRulesTest {

  static final Instant NOW = Instant.parse("2026-11-30T02:00:00Z");
  static final Instant DEADLINE = NOW.plusSeconds(3600);

  static RunRequest request(Instant deadline, int maxAttempts, String account) {
    return new RunRequest(
        "nightly",
        LocalDate.parse("2026-11-29"),
        new Scope.Inline(List.of(new AccountCursor(account, "c"))),
        deadline,
        maxAttempts,
        0);
  }

  static RunRecord running() {
    return RunRecord.created(request(DEADLINE, 3, "acct-1"), "scope-1", 1, "digest-1", NOW);
  }

  static RunRecord ended(RunState state) {
    return running().ended(state, RunProgress.initial(1), "why", NOW.plusSeconds(60));
  }

  @Test
  void theSameParametersAreTheSameRunAndAnyDifferenceIsAConflictThatNamesIt() {
    RunRecord existing = running();

    assertEquals(
        Optional.empty(), RunRules.createConflict(existing, request(DEADLINE, 3, "acct-1"), null));
    assertEquals(
        Optional.empty(),
        RunRules.createConflict(existing, request(DEADLINE, 3, "acct-1"), "digest-1"));

    String conflict =
        RunRules.createConflict(existing, request(DEADLINE.plusSeconds(60), 5, "acct-1"), null)
            .orElseThrow();
    assertTrue(conflict.startsWith("run nightly/2026-11-29 already exists"), conflict);
    assertTrue(conflict.contains("deadline ("), conflict);
    assertTrue(conflict.contains("maxAttempts (5 vs 3)"), conflict);

    assertEquals(
        Optional.of(
            "run nightly/2026-11-29 already exists with different parameters: scope contents"
                + " (the accounts are not the same)"),
        RunRules.createConflict(existing, request(DEADLINE, 3, "acct-1"), "digest-2"),
        "the same file named again, with other accounts in it");
    String scope =
        RunRules.createConflict(existing, request(DEADLINE, 3, "acct-2"), "digest-2").orElseThrow();
    assertFalse(scope.contains("scope contents"), "the scope named once: " + scope);
  }

  @Test
  void aResumeNeedsAFutureDeadlineAndARunThatEndedWithoutSucceeding() {
    assertEquals(
        "invalid_deadline", error(RunRules.resumeRefusal(ended(RunState.PARTIAL), NOW, NOW)));
    assertEquals(
        "invalid_deadline", error(RunRules.resumeRefusal(ended(RunState.PARTIAL), null, NOW)));
    assertEquals("run_running", error(RunRules.resumeRefusal(running(), DEADLINE, NOW)));
    assertEquals(
        "run_succeeded", error(RunRules.resumeRefusal(ended(RunState.SUCCEEDED), DEADLINE, NOW)));
    for (RunState state : Set.of(RunState.PARTIAL, RunState.FAILED, RunState.CANCELLED)) {
      assertEquals(
          Optional.empty(), RunRules.resumeRefusal(ended(state), DEADLINE, NOW), state.name());
    }
  }

  @Test
  void aFiledRunRetentionPrunesOrPrunedIsNotResumed() {
    assertEquals(Optional.empty(), RunRules.filedResumeRefusal("r", false, false));
    assertEquals("run_archived", error(RunRules.filedResumeRefusal("r", true, false)));
    ControlRefused archived = RunRules.filedResumeRefusal("r", false, true).orElseThrow();
    assertEquals("run_archived", archived.error());
    assertTrue(archived.message().contains("no longer in the journal"), archived.message());
  }

  @Test
  void onlyARunningRunIsCancelledAndAnUnknownOneIsNamed() {
    assertEquals(Optional.empty(), RunRules.cancelRefusal("r", RunState.RUNNING));
    ControlRefused ended = RunRules.cancelRefusal("r", RunState.PARTIAL).orElseThrow();
    assertEquals(new ControlRefused("run_ended", "run r already ended PARTIAL"), ended);
    assertEquals(new ControlRefused("unknown_run", "no run r"), RunRules.unknownRun("r"));
  }

  @Test
  void aRunningRunIsPastItsDeadlineFromTheDeadlineItselfOn() {
    assertFalse(RunRules.pastDeadline(running(), DEADLINE.minusMillis(1)));
    assertTrue(RunRules.pastDeadline(running(), DEADLINE));
    assertFalse(RunRules.pastDeadline(ended(RunState.PARTIAL), DEADLINE.plusSeconds(1)));
  }

  @Test
  void retentionPrunesOnlyARunTheCoordinatorNeitherHoldsNorIsFiling() {
    assertEquals(Optional.empty(), RunRules.pruneRefusal(false, false));
    assertTrue(RunRules.pruneRefusal(true, false).orElseThrow().contains("it was resumed"));
    assertTrue(RunRules.pruneRefusal(false, true).orElseThrow().contains("is not filed yet"));
  }

  @Test
  void signalsAreCountedOnceFromTheOffsetOnAndOneOfNoRunOnlyMovesTheOffset() {
    RunSignals one = new RunSignals(1, 0, 0, 0, 0, 0);
    RunSignals two = new RunSignals(0, 2, 0, 0, 0, 0);
    List<SignalProjection.Signal> signals =
        List.of(
            new SignalProjection.Signal(10, "a", one), // counted already
            new SignalProjection.Signal(11, "a", one),
            new SignalProjection.Signal(12, "b", two),
            new SignalProjection.Signal(13, "a", two),
            new SignalProjection.Signal(14, null, one));

    RunRules.Counted counted = RunRules.count(signals, 10);

    assertEquals(14, counted.offset());
    assertEquals(Map.of("a", one.plus(two), "b", two), counted.deltas());
    assertEquals(new RunRules.Counted(10, Map.of()), RunRules.count(signals.subList(0, 1), 10));
  }

  @Test
  void aFiledRunIsForgottenOnlyIfStillEndedAndItsCountersDidNotGrowSinceTheWrite() {
    RunSignals written = new RunSignals(1, 0, 0, 0, 0, 0);
    RunRecord partial = ended(RunState.PARTIAL);
    RunRecord resumed = ended(RunState.PARTIAL).resumed(DEADLINE.plusSeconds(60));
    RunCoordinator.State state =
        new RunCoordinator.State(
            Map.of(
                "nightly/2026-11-29", partial,
                "grew", partial,
                "resumed", resumed),
            null,
            Map.of(
                "nightly/2026-11-29", written,
                "grew", written.plus(written),
                "resumed", written),
            0,
            Set.of());

    assertEquals(
        List.of("nightly/2026-11-29"),
        RunRules.forgettable(
            Map.of(
                "nightly/2026-11-29",
                written,
                "grew",
                written,
                "resumed",
                written,
                "gone",
                written),
            state));
  }

  static String error(Optional<ControlRefused> refusal) {
    return refusal.orElseThrow().error();
  }
}

package io.fencekeeper.api.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.run.Counts;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The samples behind "progress over time" stay bounded however long a run or a node lives. */
class RunHistoryTest {

  static RunView run(String runId, RunState state, long done, Instant createdAt) {
    return new RunView(
        runId,
        "job",
        "2026-11-29",
        state,
        createdAt,
        createdAt.plusSeconds(3600),
        null,
        null,
        5,
        0,
        0,
        new Counts(1_000_000, 1_000_000 - done, 0, done, 0, 0),
        0,
        10,
        null,
        0,
        0,
        0,
        0,
        0,
        0,
        Map.of(),
        null,
        null,
        null,
        null,
        null,
        null);
  }

  @Test
  void aRunOfAnyLengthKeepsAtMostMaxSamplesAndTheSnapshotIsSmall() {
    RunHistory history = new RunHistory();
    Instant start = Instant.parse("2026-11-30T01:00:00Z");
    for (int second = 0; second < 5 * 3600; second++) {
      history.record(
          run("r/1", RunState.RUNNING, second, start), start.toEpochMilli() + second * 1000L);
    }
    assertTrue(history.size("r/1") <= RunHistory.MAX_SAMPLES, "held " + history.size("r/1"));
    assertTrue(history.size("r/1") >= RunHistory.MAX_SAMPLES / 2, "held " + history.size("r/1"));
    Map<String, Object> snapshot = history.snapshot("r/1");
    List<?> at = (List<?>) snapshot.get("at");
    assertTrue(at.size() <= RunHistory.MAX_SNAPSHOT + 1, "snapshot of " + at.size());
    assertEquals(start.toEpochMilli(), at.get(0), "the chart starts where the run started");
  }

  @Test
  void anEndedRunKeepsItsLastSampleAndStopsRecording() {
    RunHistory history = new RunHistory();
    Instant start = Instant.parse("2026-11-30T01:00:00Z");
    history.record(run("r/2", RunState.RUNNING, 10, start), 1000);
    assertTrue(history.record(run("r/2", RunState.SUCCEEDED, 20, start), 2000).isPresent());
    assertTrue(history.record(run("r/2", RunState.SUCCEEDED, 20, start), 3000).isEmpty());
    assertEquals(List.of(10L, 20L), history.snapshot("r/2").get("done"));
  }

  @Test
  void onlyTheMostRecentEndedRunsAreKept() {
    RunHistory history = new RunHistory();
    List<RunView> runs = new ArrayList<>();
    Instant start = Instant.parse("2026-11-30T01:00:00Z");
    for (int i = 0; i < RunHistory.MAX_ENDED_RUNS + 10; i++) {
      RunView ended = run("old/" + i, RunState.SUCCEEDED, 1, start.plusSeconds(i));
      runs.add(ended);
      history.record(ended, 1000);
    }
    history.forgetEnded();
    assertEquals(0, history.size("old/0"), "the oldest ended runs are forgotten");
    assertEquals(1, history.size("old/" + (RunHistory.MAX_ENDED_RUNS + 9)));
  }
}

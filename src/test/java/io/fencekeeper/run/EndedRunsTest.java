package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ended runs filed in run_record read back exactly as filed (record and counters), page newest
 * first through any filter without gap or repeat, and their counters grow in place, on both
 * databases.
 */
class EndedRunsTest {

  static ActorTestKit testKit;
  static ObjectMapper json;

  @TempDir Path dataDir;

  @BeforeAll
  static void mapper() {
    testKit = ActorTestKit.create(FencekeeperNode.config(Map.of("pekko.actor.provider", "local")));
    json =
        JacksonObjectMapperProvider.get(Adapter.toClassic(testKit.system()))
            .getOrCreate("jackson-json", Optional.empty());
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  static final Instant T = Instant.parse("2026-11-30T01:00:00Z");

  static RunRecord ended(String job, String date, RunState state, int minute) {
    return ended(job, date, state, T.plusSeconds(60L * minute));
  }

  /** A run of one item created at {@code created}, ended 30 s later. */
  static RunRecord ended(String job, String date, RunState state, Instant created) {
    RunRequest request =
        new RunRequest(
            job,
            LocalDate.parse(date),
            new Scope.Inline(List.of(new AccountCursor("acct-1", "c"))),
            T.plusSeconds(86_400),
            3,
            0);
    return RunRecord.created(request, "scope-" + job + date, 1, "digest", created)
        .ended(state, RunProgress.initial(1), "why", created.plusSeconds(30));
  }

  /** The run tables on an empty database of {@code kind}, migrated. */
  RunItemStore store(String kind) {
    return new RunItemStore(
        TestDatabases.migrated(
            kind.equals("h2") ? TestDatabases.h2File(dataDir) : TestDatabases.freshPostgres()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgresql"})
  void filedRunsReadBackPageAndCount(String kind) {
    try (RunItemStore store = store(kind)) {
      EndedRuns runs = EndedRuns.on(store, json);
      List<RunRecord> filed = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        RunRecord run =
            ended(
                i % 2 == 0 ? "nightly" : "weekly",
                "2026-11-" + (10 + i),
                i % 3 == 0 ? RunState.PARTIAL : RunState.SUCCEEDED,
                i / 2);
        runs.file(run, new RunSignals(i, 0, 0, 0, 0, 0));
        filed.add(run);
      }
      RunRecord first = filed.get(0);
      assertEquals(first, runs.find(first.runId()).orElseThrow().record(), "read back as filed");
      assertEquals(Optional.empty(), runs.find("nightly/2000-01-01"));

      // filed again (a resumed run that ended again): one row, the latest
      runs.file(first, new RunSignals(99, 0, 0, 0, 0, 0));
      runs.addSignals(first.runId(), new RunSignals(1, 2, 0, 0, 0, 0));
      assertEquals(100, runs.find(first.runId()).orElseThrow().signals().staleRejections());
      assertEquals(2, runs.find(first.runId()).orElseThrow().signals().takeovers());

      // pages of 5, newest first, exactly the matching runs
      List<String> paged = new ArrayList<>();
      RunFilter.Cursor after = null;
      do {
        List<EndedRuns.Filed> page =
            runs.page(new RunFilter(Set.of(), "nightly", null, null, after, 5), 5);
        page.forEach(f -> paged.add(f.record().runId()));
        after = page.size() < 5 ? null : RunFilter.Cursor.of(page.get(page.size() - 1).view());
      } while (after != null);
      List<String> expected =
          filed.stream()
              .filter(r -> r.request().job().equals("nightly"))
              .map(RunRecord::runId)
              .sorted((a, b) -> b.compareTo(a))
              .toList();
      assertEquals(expected, paged);

      List<EndedRuns.Filed> partial =
          runs.page(
              new RunFilter(
                  Set.of(RunState.PARTIAL),
                  null,
                  LocalDate.parse("2026-11-12"),
                  LocalDate.parse("2026-11-20"),
                  null,
                  50),
              50);
      assertTrue(
          partial.stream().allMatch(f -> f.record().state() == RunState.PARTIAL),
          partial.toString());
      assertEquals(
          List.of("2026-11-19", "2026-11-16", "2026-11-13"),
          partial.stream().map(f -> f.record().request().businessDate().toString()).toList());
    }
  }

  /**
   * Retention's side of run_record: the runs that ended before a cutoff, oldest first, page by
   * page; the one pass that claimed the writing last marks the archive, once; a pruned run is a
   * candidate no more, and reads back with where its archive is.
   */
  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgresql"})
  void retentionPagesTheRunsEndedBeforeACutoffAndMarksEachArchiveOnce(String kind) {
    try (RunItemStore store = store(kind)) {
      EndedRuns runs = EndedRuns.on(store, json);
      List<String> byEnd = new ArrayList<>();
      for (int i = 0; i < 7; i++) {
        RunRecord run = ended("nightly", "2026-11-" + (10 + i), RunState.SUCCEEDED, i);
        runs.file(run, RunSignals.NONE);
        byEnd.add(run.runId());
      }
      Instant cutoff = T.plusSeconds(60L * 5); // the first five ended before it
      List<String> paged = new ArrayList<>();
      EndedRuns.Filed after = null;
      do {
        List<EndedRuns.Filed> page = runs.endedBefore(cutoff, after, 2);
        page.forEach(f -> paged.add(f.record().runId()));
        after = page.size() < 2 ? null : page.get(page.size() - 1);
      } while (after != null);
      assertEquals(byEnd.subList(0, 5), paged);

      // ended in nanoseconds, kept in microseconds: a page of one starts after its cursor
      List<String> nanos = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        RunRecord run =
            ended("nanos", "2026-11-0" + (i + 1), RunState.SUCCEEDED, 0)
                .ended(
                    RunState.SUCCEEDED,
                    RunProgress.initial(1),
                    "why",
                    T.plusNanos(123_456_400L + 200L * i));
        runs.file(run, RunSignals.NONE);
        nanos.add(run.runId());
      }
      List<String> ones = new ArrayList<>();
      EndedRuns.Filed last = null;
      for (int page = 0; page < 8; page++) {
        List<EndedRuns.Filed> one = runs.endedBefore(T.plusSeconds(1), last, 1);
        if (one.isEmpty()) {
          break;
        }
        ones.add(one.get(0).record().runId());
        last = one.get(0);
      }
      assertEquals(nanos, ones, "each run once, in order");

      String runId = byEnd.get(0);
      RunArchive archive =
          new RunArchive(
              "nightly__2026-11-10.jsonl.gz", "ab".repeat(32), 1234, 1, 2, "node-1", T, null, 0);
      assertTrue(runs.claimArchiveWriter(runId, "pass-a"));
      assertTrue(runs.claimArchiveWriter(runId, "pass-b"), "the last to claim wins");
      assertTrue(!runs.isArchiveWriter(runId, "pass-a"));
      assertTrue(!runs.markArchived(runId, "pass-a", archive), "a pass that lost marks nothing");
      assertTrue(runs.markArchived(runId, "pass-b", archive));
      assertTrue(!runs.markArchived(runId, "pass-b", archive), "marked once");
      assertTrue(!runs.claimArchiveWriter(runId, "pass-c"), "an archived run is not written again");
      assertEquals(archive, runs.find(runId).orElseThrow().archive());
      assertEquals(archive, runs.find(runId).orElseThrow().view().archive());

      Instant prunedAt = T.plusSeconds(86_400);
      runs.markPruned(runId, prunedAt);
      RunArchive pruned = runs.find(runId).orElseThrow().archive();
      assertEquals(prunedAt, pruned.prunedAt());
      assertTrue(pruned.pruned());
      assertEquals(
          byEnd.subList(1, 5),
          runs.endedBefore(cutoff, null, 20).stream()
              .map(f -> f.record().runId())
              .filter(id -> id.startsWith("nightly/"))
              .toList(),
          "a pruned run is no candidate");
      assertEquals(null, runs.find(byEnd.get(1)).orElseThrow().archive());
    }
  }

  /**
   * A node's clock gives creation times in nanoseconds; both databases keep microseconds. A page
   * that starts after a run must not show that run again, whichever way its time was cut.
   */
  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgresql"})
  void aPageStartsAfterItsCursorWhenCreationTimesCarryNanoseconds(String kind) {
    try (RunItemStore store = store(kind)) {
      EndedRuns runs = EndedRuns.on(store, json);
      List<String> newestFirst = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        // .123456400 and .123456600 s: below and above the half microsecond
        Instant created = T.plusSeconds(i).plusNanos(i % 2 == 0 ? 123_456_400 : 123_456_600);
        RunRecord run = ended("nanos", "2026-11-0" + (i + 1), RunState.SUCCEEDED, created);
        runs.file(run, RunSignals.NONE);
        newestFirst.add(0, run.runId());
      }

      List<String> paged = new ArrayList<>();
      RunFilter.Cursor after = null;
      for (int page = 0; page < 6; page++) {
        List<EndedRuns.Filed> one =
            runs.page(new RunFilter(Set.of(), "nanos", null, null, after, 1), 1);
        if (one.isEmpty()) {
          break;
        }
        paged.add(one.get(0).record().runId());
        after = RunFilter.Cursor.of(one.get(0).view());
      }

      assertEquals(newestFirst, paged);
    }
  }
}

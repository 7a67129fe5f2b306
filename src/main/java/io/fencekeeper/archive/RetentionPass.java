package io.fencekeeper.archive;

import io.fencekeeper.run.EndedRuns;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.ScopePurge;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One retention pass: first the runs an earlier pass left half-way (the coordinator's claims), then
 * every filed run that ended before the cutoff, oldest first; each decision is logged. A dry run
 * only says what a pass would do. Blocking: runs on the keeper's own thread.
 */
final class RetentionPass {

  private static final Logger log = LoggerFactory.getLogger(RetentionPass.class);

  static final int PAGE = 100;

  /** A temporary archive file this old was left by a pass that died (none writes for an hour). */
  static final java.time.Duration STALE_TEMPORARY = java.time.Duration.ofHours(1);

  /** What a pass did. */
  record Summary(int archived, int finished, int skipped, long rowsDeleted, long bytesArchived) {}

  private final RetentionKeeper.Dependencies deps;
  private final BooleanSupplier cancelled;

  RetentionPass(RetentionKeeper.Dependencies deps, BooleanSupplier cancelled) {
    this.deps = deps;
    this.cancelled = cancelled;
  }

  /**
   * The decisions a pass with {@code cutoff} (null: only the runs left half-way) makes, in order,
   * without doing anything: each one to {@code decision}.
   */
  void plan(Instant cutoff, Consumer<PruneDecision> decision) {
    Set<String> claims = claims();
    Map<String, RunState> held = held();
    for (String runId : claims) {
      var filed = deps.ended().find(runId);
      decision.accept(
          new PruneDecision(
              runId,
              filed.map(f -> f.record().state().name()).orElse(null),
              filed.map(f -> f.record().endedAt()).orElse(null),
              PruneDecision.Action.FINISH,
              "an earlier retention pass began pruning it"));
    }
    forEachCandidate(
        cutoff,
        claims,
        filed -> {
          RunState holds = held.get(filed.record().runId());
          decision.accept(
              new PruneDecision(
                  filed.record().runId(),
                  filed.record().state().name(),
                  filed.record().endedAt(),
                  holds != null ? PruneDecision.Action.SKIP : PruneDecision.Action.ARCHIVE,
                  holds == null
                      ? "ended before " + cutoff
                      : holds.ended()
                          ? "the coordinator is still filing it (it ended a moment ago)"
                          : "it was resumed and is " + holds + " again"));
        });
  }

  /** Prunes what {@link #plan} lists, logging each decision, then vacuums what it deleted from. */
  Summary run(Instant cutoff, String why) throws IOException {
    long started = System.nanoTime();
    log.info(
        "retention pass ({}): {}",
        why,
        cutoff == null
            ? "finishing what an earlier pass began"
            : "runs that ended before " + cutoff);
    int litter = ArchiveFiles.removeStaleTemporaries(deps.settings().archiveDir(), STALE_TEMPORARY);
    if (litter > 0) {
      log.info("retention: removed {} temporary files an interrupted pass left", litter);
    }
    RunPruning pruning = new RunPruning(deps, cancelled);
    int[] counts = new int[3]; // archived, finished, skipped
    long[] totals = new long[2]; // rows, bytes
    Set<String> claims = claims();
    for (String runId : claims) {
      if (cancelled.getAsBoolean()) {
        break;
      }
      log.info("retention: run {}: finishing what an earlier pass began", runId);
      tally(pruning.prune(runId), counts, totals, 1);
    }
    IOException[] failure = new IOException[1];
    forEachCandidate(
        cutoff,
        claims,
        filed -> {
          if (cancelled.getAsBoolean() || failure[0] != null) {
            return;
          }
          String runId = filed.record().runId();
          log.info(
              "retention: run {} ended {} at {}, before {}: archiving",
              runId,
              filed.record().state(),
              filed.record().endedAt(),
              cutoff);
          try {
            tally(pruning.prune(runId), counts, totals, 0);
          } catch (IOException e) {
            failure[0] = e;
          }
        });
    if (failure[0] != null) {
      throw failure[0];
    }
    if (totals[0] > 0) {
      long vacuumStarted = System.nanoTime();
      if (ScopePurge.on(deps.store()).vacuum()) {
        log.info(
            "retention: vacuumed the journal and run tables in {} ms",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - vacuumStarted));
      }
    }
    Summary summary = new Summary(counts[0], counts[1], counts[2], totals[0], totals[1]);
    log.info(
        "retention pass ({}) done in {} ms: {} runs archived, {} finished, {} skipped, {} rows"
            + " deleted, {} bytes archived",
        why,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
        summary.archived(),
        summary.finished(),
        summary.skipped(),
        summary.rowsDeleted(),
        summary.bytesArchived());
    return summary;
  }

  private static void tally(RunPruning.Outcome outcome, int[] counts, long[] totals, int kind) {
    if (outcome.skipped() != null) {
      log.info("retention: run {} skipped: {}", outcome.runId(), outcome.skipped());
      counts[2]++;
    } else {
      counts[kind]++;
    }
    totals[0] += outcome.rowsDeleted();
    totals[1] += outcome.bytesArchived();
  }

  /** Every filed run not pruned that ended before {@code cutoff}, oldest first, page by page. */
  private void forEachCandidate(
      Instant cutoff, Set<String> except, Consumer<EndedRuns.Filed> action) {
    if (cutoff == null) {
      return;
    }
    EndedRuns.Filed after = null;
    while (!cancelled.getAsBoolean()) {
      List<EndedRuns.Filed> page = deps.ended().endedBefore(cutoff, after, PAGE);
      for (EndedRuns.Filed filed : page) {
        if (!except.contains(filed.record().runId())) {
          action.accept(filed);
        }
      }
      if (page.size() < PAGE) {
        return;
      }
      after = page.get(page.size() - 1);
    }
  }

  private Set<String> claims() {
    RunCoordinator.PruningClaims claims =
        CoordinatorCalls.ask(deps.system(), deps.coordinator(), RunCoordinator.GetPruning::new);
    return new TreeSet<>(claims.runIds());
  }

  /** The runs the coordinator holds (not ended, resumed, or not filed yet), by state. */
  private Map<String, RunState> held() {
    RunCoordinator.RunList runs =
        CoordinatorCalls.ask(deps.system(), deps.coordinator(), RunCoordinator.ListRuns::new);
    Map<String, RunState> states = new TreeMap<>();
    runs.runs().forEach(run -> states.put(run.runId(), run.state()));
    return states;
  }

  /** The decisions of a plan, at most {@code limit} of them kept, and how many there were. */
  static final class Plan implements Consumer<PruneDecision> {
    final List<PruneDecision> decisions = new ArrayList<>();
    final int limit;
    long total;

    Plan(int limit) {
      this.limit = limit;
    }

    @Override
    public void accept(PruneDecision decision) {
      total++;
      if (decisions.size() < limit) {
        decisions.add(decision);
      }
    }
  }
}

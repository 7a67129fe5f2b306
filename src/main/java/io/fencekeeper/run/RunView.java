package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.GovernorView;
import java.time.Instant;
import java.util.Map;

/**
 * A run as operators and the API see it. The counters ({@code staleRejections}, {@code takeovers},
 * {@code reconciliations}, {@code throttledAnswers}, {@code attempts}, {@code quarantines}) are
 * derived from the items' journaled events ({@link RunSignals}); {@code attempts} is every attempt
 * that ended: the DONE items' completing ones and those that ended without completing. {@code
 * scopeId} names the run's rows in {@code run_item} (for the API's item pages; not shown to
 * clients); {@code provider} the provider it calls (null while it is being staged); {@code
 * takeoversByNode} when each node's leases were taken over (a node that died, paused or was cut
 * off), by node; {@code archive} where retention archived the run (null until it did:
 * docs/design.md, "Retention and the archive"); {@code fleet} what a running run needs in flight of
 * the fleet, and why (null once it ended); {@code staging} how far the scope of a STAGING run has
 * come (null in every other state).
 */
public record RunView(
    String runId,
    String job,
    String businessDate,
    RunState state,
    Instant createdAt,
    Instant deadline,
    Instant endedAt,
    String endReason,
    int maxAttempts,
    int maxFailedItems,
    int resumes,
    Counts counts,
    double backlogAgeSeconds,
    double itemsPerSecond,
    Instant projectedFinish,
    long staleRejections,
    long takeovers,
    long reconciliations,
    long throttledAnswers,
    long attempts,
    long quarantines,
    Map<String, RunSignals.NodeTakeovers> takeoversByNode,
    GovernorView governor,
    FleetPolicy.Need fleet,
    String scopeId,
    String provider,
    RunArchive archive,
    StagingProgress staging)
    implements CborSerializable {

  /**
   * A run's record with the figures of its dispatcher (or its final figures once ended) and its
   * counters from the journal (which keep growing after the end when a late holder is refused).
   */
  /** This view with how far its scope has come (a STAGING run's). */
  public RunView withStaging(StagingProgress progress) {
    return new RunView(
        runId,
        job,
        businessDate,
        state,
        createdAt,
        deadline,
        endedAt,
        endReason,
        maxAttempts,
        maxFailedItems,
        resumes,
        counts,
        backlogAgeSeconds,
        itemsPerSecond,
        projectedFinish,
        staleRejections,
        takeovers,
        reconciliations,
        throttledAnswers,
        attempts,
        quarantines,
        takeoversByNode,
        governor,
        fleet,
        scopeId,
        provider,
        archive,
        progress);
  }

  /**
   * The {@code endReason} of a RUNNING run that was cancelled and whose items are being closed
   * (docs/external-workers.md: claim-next answers {@code run_cancelled} from then on).
   */
  public static final String CANCELLING = "cancelled: its items are being closed";

  /**
   * Whether this RUNNING run stops (too many failures, its deadline, a cancel): it hands nothing
   * more out, and {@code endReason} says why until it ends.
   */
  public boolean stopping() {
    return state == RunState.RUNNING && endReason != null;
  }

  /** Whether this RUNNING run was cancelled and its items are being closed. */
  public boolean cancelling() {
    return stopping() && CANCELLING.equals(endReason);
  }

  static RunView of(RunRecord run, RunProgress live, RunSignals signals) {
    return of(run, live, signals, null);
  }

  static RunView of(RunRecord run, RunProgress live, RunSignals signals, RunArchive archive) {
    RunProgress p = run.finalProgress();
    if (run.state() == RunState.RUNNING || p == null) {
      p = live != null ? live : RunProgress.initial(run.itemCount());
    }
    return new RunView(
        run.runId(),
        run.request().job(),
        run.request().businessDate().toString(),
        run.state(),
        run.createdAt(),
        run.deadline(),
        run.endedAt(),
        run.state() == RunState.RUNNING && p.stopping() != null ? p.stopping() : run.endReason(),
        run.request().maxAttempts(),
        run.request().maxFailedItems(),
        run.resumes(),
        p.counts(),
        p.backlogAgeSeconds(),
        p.itemsPerSecond(),
        p.projectedFinish(),
        signals.staleRejections(),
        signals.takeovers(),
        signals.reconciliations(),
        signals.throttledAnswers(),
        p.counts().done() + signals.attemptsWithoutCompletion(),
        signals.quarantines(),
        signals.takeoversByNode(),
        p.governor(),
        run.state() == RunState.RUNNING ? p.fleet() : null,
        run.scopeId(),
        run.request().providerName(),
        archive,
        null);
  }
}

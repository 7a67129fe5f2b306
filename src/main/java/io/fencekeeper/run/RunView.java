package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.run.governor.GovernorView;
import java.time.Instant;

/**
 * A run as operators and the API see it. {@code scopeId} names the run's rows in {@code run_item}
 * (for the API's item pages; not shown to clients); {@code provider} the provider it calls (null
 * while it is being staged).
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
    long leaseExpiries,
    long reconciliations,
    long throttledAnswers,
    GovernorView governor,
    String scopeId,
    String provider)
    implements CborSerializable {

  /** A run whose provider is not known here (being staged). */
  public RunView(
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
      long leaseExpiries,
      long reconciliations,
      long throttledAnswers,
      GovernorView governor,
      String scopeId) {
    this(
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
        leaseExpiries,
        reconciliations,
        throttledAnswers,
        governor,
        scopeId,
        null);
  }

  /** A run's record with the figures of its dispatcher (or its final figures once ended). */
  static RunView of(RunRecord run, RunProgress live) {
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
        run.endReason(),
        run.request().maxAttempts(),
        run.request().maxFailedItems(),
        run.resumes(),
        p.counts(),
        p.backlogAgeSeconds(),
        p.itemsPerSecond(),
        p.projectedFinish(),
        p.staleRejections(),
        p.leaseExpiries(),
        p.reconciliations(),
        p.throttledAnswers(),
        p.governor(),
        run.scopeId(),
        run.request().providerName());
  }
}

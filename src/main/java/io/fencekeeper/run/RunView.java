package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import java.time.Instant;

/** A run as operators and the API see it. */
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
    RunProgress.GovernorView governor)
    implements CborSerializable {}

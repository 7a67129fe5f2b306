package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.run.governor.GovernorView;
import java.time.Instant;

/**
 * What the dispatcher of a run knows about its progress: the figures an operator watches.
 *
 * @param backlogAgeSeconds age of the oldest item that is neither done nor leased
 * @param itemsPerSecond recent completion rate
 * @param projectedFinish when the run finishes at the recent rate; null when nothing is moving
 * @param staleRejections attempts that lost their lease and were rejected
 * @param leaseExpiries claims that took over an expired lease
 * @param quarantines items the run's dispatcher saw quarantined (an item still quarantined when a
 *     dispatcher starts again counts again)
 */
public record RunProgress(
    Counts counts,
    double backlogAgeSeconds,
    double itemsPerSecond,
    Instant projectedFinish,
    long staleRejections,
    long leaseExpiries,
    long reconciliations,
    long throttledAnswers,
    GovernorView governor,
    long quarantines)
    implements CborSerializable {

  public static RunProgress initial(long total) {
    return new RunProgress(Counts.allPending(total), 0, 0, null, 0, 0, 0, 0, null, 0);
  }
}

package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.run.governor.FleetPolicy;
import io.fencekeeper.run.governor.GovernorView;
import java.time.Instant;

/**
 * What the dispatcher of a run knows about its progress: the figures an operator watches.
 *
 * @param backlogAgeSeconds age of the oldest item that is neither done nor leased
 * @param itemsPerSecond recent completion rate
 * @param projectedFinish when the run finishes at the recent rate; null when nothing is moving
 * @param fleet what the run needs in flight of the fleet, and why; null once it ended (and in
 *     figures written before the fleet's rule existed)
 * @param stopping why a running run stops (too many failures, its deadline, a cancel: it hands
 *     nothing more out and its items are being closed); null while it goes on, and once it ended
 *     <p>The counters of what went wrong (stale rejections, takeovers, ...) are not the
 *     dispatcher's: they come from the journal ({@link RunSignals}).
 */
public record RunProgress(
    Counts counts,
    double backlogAgeSeconds,
    double itemsPerSecond,
    Instant projectedFinish,
    GovernorView governor,
    FleetPolicy.Need fleet,
    String stopping)
    implements CborSerializable {

  public RunProgress(
      Counts counts,
      double backlogAgeSeconds,
      double itemsPerSecond,
      Instant projectedFinish,
      GovernorView governor,
      FleetPolicy.Need fleet) {
    this(counts, backlogAgeSeconds, itemsPerSecond, projectedFinish, governor, fleet, null);
  }

  public static RunProgress initial(long total) {
    return new RunProgress(Counts.allPending(total), 0, 0, null, null, null);
  }
}

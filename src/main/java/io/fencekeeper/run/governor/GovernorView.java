package io.fencekeeper.run.governor;

import io.fencekeeper.CborSerializable;
import java.time.Instant;
import java.util.List;

/** The governor of a run as operators see it: the decision in force and the recent changes. */
public record GovernorView(
    GovernorPolicy.Mode mode, int cap, String reason, List<GovernorView.Change> changes)
    implements CborSerializable {

  /** One logged decision, newest last in {@link GovernorView#changes()}. */
  public record Change(Instant at, GovernorPolicy.Mode mode, int cap, String reason)
      implements CborSerializable {}
}

package io.fencekeeper.run.schedule;

import io.fencekeeper.CborSerializable;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Objects;

/**
 * One nightly firing of a schedule: when it is due, the business date it reconciles and the
 * deadline of the run it creates. Firings are computed, never stored by the calendar, so every node
 * and every retried timer derives the same firing and therefore the same run id ({@code
 * job/businessDate}).
 */
public record Firing(String job, Instant scheduledAt, LocalDate businessDate, Instant deadline)
    implements CborSerializable {

  public Firing {
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(scheduledAt, "scheduledAt");
    Objects.requireNonNull(businessDate, "businessDate");
    Objects.requireNonNull(deadline, "deadline");
    if (!deadline.isAfter(scheduledAt)) {
      throw new IllegalArgumentException(
          "deadline " + deadline + " must be after the scheduled time " + scheduledAt);
    }
  }

  /** The id of the run this firing creates. */
  public String runId() {
    return job + "/" + businessDate;
  }
}

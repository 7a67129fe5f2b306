package io.fencekeeper.verify;

import io.fencekeeper.CborSerializable;
import java.time.Instant;
import java.util.List;

/**
 * A verification as the API, the CLI and the dashboard see it: its plan, how far it got, the counts
 * per outcome and its first findings (all of them: {@code GET
 * /api/runs/{runId}/verifications/{n}/findings}).
 *
 * @param toCheck the rows it checks: the whole scope or the sample's size
 * @param scanned rows of the scope passed so far (checked or not chosen by the sample)
 * @param findings the first {@link #SHOWN} findings (discrepancies and resolutions), scope order
 * @param findingCount every finding so far
 * @param reason why it could not complete (FAILED), else null
 */
public record VerificationView(
    String runId,
    int number,
    Status status,
    String provider,
    long population,
    long sample,
    long seed,
    long toCheck,
    long scanned,
    Tally tally,
    List<Finding> findings,
    long findingCount,
    boolean auto,
    Instant requestedAt,
    Instant endedAt,
    String reason)
    implements CborSerializable {

  /** How many findings a view carries; the export has them all. */
  public static final int SHOWN = 100;

  public enum Status {
    RUNNING,
    COMPLETED,
    /** It could not complete: the provider or the items did not answer; {@code reason} says. */
    FAILED
  }

  /** The one-word answer: AGREE, DISCREPANCIES, INCOMPLETE, or RUNNING. */
  public String verdict() {
    return switch (status) {
      case RUNNING -> "RUNNING";
      case FAILED -> "INCOMPLETE";
      case COMPLETED -> tally.discrepancies() == 0 ? "AGREE" : "DISCREPANCIES";
    };
  }

  public long checked() {
    return tally.checked();
  }

  /** The same without its findings: what the keeper keeps for every verification. */
  VerificationView summary() {
    return new VerificationView(
        runId,
        number,
        status,
        provider,
        population,
        sample,
        seed,
        toCheck,
        scanned,
        tally,
        List.of(),
        findingCount,
        auto,
        requestedAt,
        endedAt,
        reason);
  }

  static VerificationView initial(VerificationPlan plan) {
    return new VerificationView(
        plan.runId(),
        plan.number(),
        Status.RUNNING,
        plan.provider(),
        plan.population(),
        plan.sample(),
        plan.seed(),
        plan.sampling().toCheck(),
        0,
        Tally.NONE,
        List.of(),
        0,
        plan.auto(),
        plan.requestedAt(),
        null,
        null);
  }
}

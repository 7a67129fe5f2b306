package io.fencekeeper.verify;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.run.RunView;
import java.time.Instant;
import java.time.LocalDate;

/**
 * What one verification checks, fixed when it is requested and journaled by the keeper: the run's
 * scope, its provider and which rows (all, or a sample with its seed). {@code number} counts the
 * run's verifications from 1.
 *
 * @param population the rows of the run's scope
 * @param sample 0 checks every row; otherwise how many rows, drawn with {@code seed}
 * @param auto requested by the run's own end ({@code fencekeeper.verify.when-run-ends}), not by an
 *     operator
 */
public record VerificationPlan(
    String runId,
    int number,
    String job,
    LocalDate businessDate,
    String scopeId,
    String provider,
    long population,
    long sample,
    long seed,
    boolean auto,
    Instant requestedAt)
    implements CborSerializable {

  /** A plan for an ended run, numbered by the keeper. */
  public static VerificationPlan of(
      RunView run, long sample, long seed, boolean auto, Instant requestedAt) {
    long population = run.counts().total();
    // a sample as large as the scope is the whole scope: no seed to state
    boolean all = sample <= 0 || sample >= population;
    return new VerificationPlan(
        run.runId(),
        0,
        run.job(),
        LocalDate.parse(run.businessDate()),
        run.scopeId(),
        run.provider(),
        population,
        all ? 0 : sample,
        all ? 0 : seed,
        auto,
        requestedAt);
  }

  VerificationPlan numbered(int n) {
    return new VerificationPlan(
        runId,
        n,
        job,
        businessDate,
        scopeId,
        provider,
        population,
        sample,
        seed,
        auto,
        requestedAt);
  }

  /** {@code {runId}#{number}}: unique in the cluster. */
  public String id() {
    return runId + "#" + number;
  }

  public Sampling sampling() {
    return new Sampling(population, sample, seed);
  }

  public ItemId itemId(String accountId, String cursor) {
    return ItemId.of(job, businessDate, accountId, cursor);
  }

  /** Whether {@code other} asks for the same rows (a repeated request joins a running one). */
  boolean sameRows(long otherSample, long otherSeed) {
    return sample == otherSample && (sample == 0 || seed == otherSeed);
  }
}

package io.fencekeeper.verify;

/**
 * Which rows of a run's scope a verification checks: all of them, or a random sample of exactly
 * {@code size} of the {@code population} rows, drawn in one pass in scope order (Knuth's selection
 * sampling, Algorithm S) so that no list of rows is ever held. The draw for a row is a function of
 * the seed and the row's index alone, so a verification that resumes after a crash from a
 * checkpoint (index, rows chosen so far) makes exactly the choices it would have made.
 *
 * @param size 0 checks every row
 */
public record Sampling(long population, long size, long seed) {

  public Sampling {
    if (population < 0 || size < 0) {
      throw new IllegalArgumentException("population and size must be >= 0");
    }
  }

  public static Sampling all(long population) {
    return new Sampling(population, 0, 0);
  }

  public boolean all() {
    return size == 0 || size >= population;
  }

  /** How many rows the verification checks. */
  public long toCheck() {
    return all() ? population : size;
  }

  /**
   * Whether the row at {@code index} (0-based, in scope order) is checked, {@code chosen} rows
   * having been chosen before it: with probability (rows still wanted) / (rows left).
   */
  public boolean selects(long index, long chosen) {
    if (all()) {
      return true;
    }
    long left = population - index;
    long wanted = size - chosen;
    if (wanted <= 0 || left <= 0) {
      return false;
    }
    return uniform(index) * left < wanted;
  }

  /** A uniform number in [0, 1) from the seed and the index (SplitMix64's finaliser). */
  double uniform(long index) {
    long z = seed + (index + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    z = z ^ (z >>> 31);
    return (z >>> 11) * 0x1.0p-53;
  }
}

package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A sample of a run's scope: exactly its size, the same for the same seed, and resumable. */
class SamplingTest {

  static List<Long> draw(Sampling sampling, long fromIndex, long chosenBefore) {
    List<Long> chosen = new ArrayList<>();
    long count = chosenBefore;
    for (long i = fromIndex; i < sampling.population(); i++) {
      if (sampling.selects(i, count)) {
        chosen.add(i);
        count++;
      }
    }
    return chosen;
  }

  @Test
  void aSampleHasExactlyItsSize() {
    for (long seed = 1; seed <= 50; seed++) {
      assertEquals(37, draw(new Sampling(1000, 37, seed), 0, 0).size(), "seed " + seed);
    }
    assertEquals(999, draw(new Sampling(1000, 999, 3), 0, 0).size());
    assertEquals(1, draw(new Sampling(1000, 1, 3), 0, 0).size());
  }

  @Test
  void theSameSeedDrawsTheSameRowsAndAnotherSeedOthers() {
    assertEquals(draw(new Sampling(5000, 100, 42), 0, 0), draw(new Sampling(5000, 100, 42), 0, 0));
    assertNotEquals(
        draw(new Sampling(5000, 100, 42), 0, 0), draw(new Sampling(5000, 100, 43), 0, 0));
  }

  @Test
  void aPassThatResumesMidwayMakesTheSameChoices() {
    Sampling sampling = new Sampling(5000, 250, 7);
    List<Long> whole = draw(sampling, 0, 0);
    long chosenBefore = whole.stream().filter(i -> i < 2000).count();

    List<Long> rest = draw(sampling, 2000, chosenBefore);

    assertEquals(whole.stream().filter(i -> i >= 2000).toList(), rest);
  }

  @Test
  void everyRowIsAboutEquallyLikely() {
    // 2,000 draws of 10 of 100 rows: each row is expected 200 times
    int[] hits = new int[100];
    for (long seed = 0; seed < 2000; seed++) {
      for (long row : draw(new Sampling(100, 10, seed * 7919), 0, 0)) {
        hits[(int) row]++;
      }
    }
    for (int row = 0; row < hits.length; row++) {
      assertTrue(hits[row] > 120 && hits[row] < 280, "row " + row + " drawn " + hits[row]);
    }
  }

  @Test
  void noSizeOrASizeAsLargeAsTheScopeIsEveryRow() {
    assertEquals(100, draw(Sampling.all(100), 0, 0).size());
    assertEquals(100, draw(new Sampling(100, 100, 9), 0, 0).size());
    assertEquals(100, draw(new Sampling(100, 500, 9), 0, 0).size());
    assertEquals(100, new Sampling(100, 500, 9).toCheck());
    assertEquals(10, new Sampling(100, 10, 9).toCheck());
  }
}

package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Which orphan shards the coordinator asks one item of, second by second: a shard whose ask is on
 * its way is not asked again however long the answer takes; an answered one only once its host has
 * had {@link OrphanPokes#ANSWER_LASTS} to report it; a failed ask and a member's removal let it be
 * asked at once; a shard that is hosted again is forgotten.
 */
class OrphanPokesTest {

  static final Instant T0 = Instant.parse("2026-11-30T02:00:00Z");

  final OrphanPokes pokes = new OrphanPokes();

  static Instant at(double seconds) {
    return T0.plus(Duration.ofMillis((long) (seconds * 1000)));
  }

  @Test
  void aShardWhoseAskIsOnItsWayIsNotAskedAgainSecondAfterSecond() {
    List<Integer> orphans = List.of(0, 1, 2);
    assertEquals(orphans, pokes.due(orphans, at(0)), "nobody asked yet: all of them");
    orphans.forEach(shard -> pokes.asked(shard, new CompletableFuture<>()));

    for (int second = 1; second <= 6; second++) {
      assertEquals(List.of(), pokes.due(orphans, at(second)), "no answer yet at " + second + " s");
    }
  }

  @Test
  void anAnsweredShardIsAskedAgainOnlyIfItsHostStaysSilentForAWhile() {
    CompletableFuture<String> ask = new CompletableFuture<>();
    pokes.due(List.of(7), at(0));
    pokes.asked(7, ask);
    ask.complete("accepted");

    assertEquals(List.of(), pokes.due(List.of(7), at(1)), "answered: its host reports it soon");
    assertEquals(List.of(), pokes.due(List.of(7), at(3.9)));
    assertEquals(
        List.of(7),
        pokes.due(List.of(7), at(1).plus(OrphanPokes.ANSWER_LASTS)),
        "still nobody reports it: asked again");
  }

  @Test
  void aFailedAskIsRepeatedAtOnce() {
    CompletableFuture<String> ask = new CompletableFuture<>();
    pokes.due(List.of(3), at(0));
    pokes.asked(3, ask);
    ask.completeExceptionally(new TimeoutException("no answer from the shard's old home"));

    assertEquals(List.of(3), pokes.due(List.of(3), at(1)));
  }

  @Test
  void aMemberRemovedLetsEveryShardBeAskedAtOnce() {
    CompletableFuture<String> onItsWay = new CompletableFuture<>();
    CompletableFuture<String> answered = CompletableFuture.completedFuture("accepted");
    pokes.due(List.of(1, 2), at(0));
    pokes.asked(1, onItsWay);
    pokes.asked(2, answered);
    assertEquals(List.of(), pokes.due(List.of(1, 2), at(1)));

    pokes.forget();

    assertEquals(
        List.of(1, 2),
        pokes.due(List.of(1, 2), at(1.2)),
        "an ask that raced the removal went to the dead node");
  }

  @Test
  void aShardHostedAgainIsForgottenAndAskedAtOnceIfItIsAnOrphanAgain() {
    pokes.due(List.of(4), at(0));
    pokes.asked(4, new CompletableFuture<>());
    assertEquals(List.of(), pokes.due(List.of(), at(1)), "a node reports it: no orphan");

    assertEquals(List.of(4), pokes.due(List.of(4), at(2)), "its host left it: asked anew");
  }
}

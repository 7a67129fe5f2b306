package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.worker.WorkProtocol.NothingNow;
import io.fencekeeper.worker.WorkProtocol.WorkBatch;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** claim-next's answer when no dispatcher had an item: the dispatchers' reasons together. */
class ClaimNextTest {

  static final Instant NOW = Instant.parse("2026-11-29T01:00:00Z");

  static WorkBatch empty(NothingNow why, Instant retryAt) {
    return new WorkBatch("run", List.of(), false, null, false, why, retryAt);
  }

  @Test
  void drainedOnlyWhenEveryDispatcherIsDrained() {
    assertEquals(
        new ClaimNext.Nothing(NothingNow.DRAINED, Duration.ZERO),
        ClaimNext.nothing(
            List.of(empty(NothingNow.DRAINED, null), empty(NothingNow.DRAINED, null)), NOW));
    assertEquals(
        new ClaimNext.Nothing(NothingNow.WAITING, Duration.ofSeconds(3)),
        ClaimNext.nothing(
            List.of(empty(NothingNow.DRAINED, null), empty(NothingNow.WAITING, NOW.plusSeconds(3))),
            NOW),
        "one node still has items waiting for a time: ask again when the first is due");
  }

  @Test
  void theCapHoldsWorkBackBeforeAnyWaitAndTheSoonestTimeCounts() {
    assertEquals(
        new ClaimNext.Nothing(NothingNow.AT_CAP, Duration.ofSeconds(1)),
        ClaimNext.nothing(
            List.of(
                empty(NothingNow.WAITING, NOW.plusSeconds(4)),
                empty(NothingNow.AT_CAP, NOW.plusSeconds(1))),
            NOW));
  }

  @Test
  void noDispatcherOrAnOlderNodesSilenceIsAWaitOfASecond() {
    assertEquals(
        new ClaimNext.Nothing(NothingNow.WAITING, Duration.ofSeconds(1)),
        ClaimNext.nothing(List.of(), NOW));
    assertEquals(
        new ClaimNext.Nothing(NothingNow.WAITING, Duration.ofSeconds(1)),
        ClaimNext.nothing(List.of(empty(null, null)), NOW));
  }
}

package io.fencekeeper.provider.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.sim.SimFaultInjector.CleanupFate;
import io.fencekeeper.provider.sim.SimFaultInjector.Throttled;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Which fault a call meets, without HTTP: the rate limit on a clock the test moves, and the random
 * faults over many seeded calls (their fractions within a few standard deviations of the knob).
 */
class SimFaultInjectorTest {

  private static final int CALLS = 20_000;

  private final AtomicLong nanos = new AtomicLong();

  @Test
  void aCallBeyondTheRateIsThrottledUntilTheNextTokenIsDue() {
    SimFaultInjector injector = injector(SimFaults.NONE.withThrottlePerSecond(2), 1);

    assertTrue(injector.throttle().isEmpty(), "a burst of one second's worth passes");
    assertTrue(injector.throttle().isEmpty());
    Throttled third = injector.throttle().orElseThrow();
    assertEquals(2.0, third.ratePerSecond());
    assertEquals(500, third.waitMillis(), "one token every half second");
    assertEquals(1, third.retryAfterSeconds(), "Retry-After rounds up to whole seconds");

    advanceMillis(500);
    assertTrue(injector.throttle().isEmpty(), "the next token is there on time");
    assertTrue(injector.throttle().isPresent());
  }

  @Test
  void aRateBelowOneASecondAsksToWaitMoreThanASecond() {
    SimFaultInjector injector = injector(SimFaults.NONE.withThrottlePerSecond(0.4), 1);

    assertTrue(injector.throttle().isEmpty(), "a burst is never less than one call");
    Throttled second = injector.throttle().orElseThrow();
    assertEquals(2500, second.waitMillis());
    assertEquals(3, second.retryAfterSeconds());
  }

  @Test
  void withoutARateNothingIsThrottled() {
    SimFaultInjector injector = injector(SimFaults.NONE, 1);

    for (int i = 0; i < CALLS; i++) {
      assertTrue(injector.throttle().isEmpty());
    }
  }

  @Test
  void aThrottleShareRefusesThatShareOfCallsAtRandomWithARetryAfter() {
    SimFaultInjector injector = injector(SimFaults.NONE.withThrottleShare(0.05), 23);
    List<Throttled> answers = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      answers.add(injector.throttle().orElse(null));
    }

    assertFraction(0.05, answers, answer -> answer != null);
    Throttled refused = answers.stream().filter(a -> a != null).findFirst().orElseThrow();
    assertEquals(SimFaults.RANDOM_THROTTLE_WAIT_MS, refused.waitMillis());
    assertEquals(1, refused.retryAfterSeconds(), "Retry-After rounds up to whole seconds");
    assertTrue(refused.reason().contains("at random"), refused.reason());
  }

  @Test
  void newKnobsAtTheSameRateDoNotRefillTheBucketButANewRateStartsAFullOne() {
    SimFaults throttled = SimFaults.NONE.withThrottlePerSecond(1);
    SimFaultInjector injector = injector(throttled, 1);
    assertTrue(injector.throttle().isEmpty());

    injector.setFaults(throttled.withLatency(5, 0));
    assertTrue(injector.throttle().isPresent(), "the spent token stays spent");

    injector.setFaults(throttled.withThrottlePerSecond(3));
    assertTrue(injector.throttle().isEmpty(), "a new rate, a full bucket");

    injector.setFaults(SimFaults.NONE);
    assertTrue(injector.throttle().isEmpty(), "the limit is lifted");
  }

  @Test
  void theDelayIsTheLatencyPlusAJitterThatReachesBothEnds() {
    SimFaults faults = SimFaults.NONE.withLatency(20, 3);
    SimFaultInjector injector = injector(faults, 7);

    List<Long> delays = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      delays.add(injector.delayMs(faults));
    }

    assertTrue(delays.stream().allMatch(d -> d >= 20 && d <= 23), delays.toString());
    assertTrue(delays.contains(20L) && delays.contains(23L), "both ends are drawn");
    SimFaults steady = SimFaults.NONE.withLatency(20, 0);
    assertEquals(20, injector.delayMs(steady), "no jitter, no spread");
  }

  @Test
  void aSeededTimeoutAfterAcceptFractionIsHonouredAndCarriesItsHold() {
    SimFaults faults = SimFaults.NONE.withTimeoutAfterAccept(0.3, 250);
    List<CleanupFate> fates = fates(injector(faults, 11), faults);

    assertFraction(0.3, fates, fate -> fate instanceof CleanupFate.Unanswered);
    assertTrue(
        fates.stream()
            .allMatch(
                fate ->
                    fate instanceof CleanupFate.Answered
                        || ((CleanupFate.Unanswered) fate).holdMs() == 250),
        "only answered or unanswered-after-the-hold");
  }

  @Test
  void errorsComeBeforeAndAfterApplyingInEqualParts() {
    SimFaults faults = SimFaults.NONE.withErrorRate(0.2);
    List<CleanupFate> fates = fates(injector(faults, 13), faults);

    assertFraction(0.1, fates, fate -> fate instanceof CleanupFate.Failed f && f.applied());
    assertFraction(0.1, fates, fate -> fate instanceof CleanupFate.Failed f && !f.applied());
    assertFraction(0.8, fates, fate -> fate instanceof CleanupFate.Answered);
  }

  @Test
  void aCleanupThatFailsIsNotAlsoLeftUnanswered() {
    SimFaults faults = SimFaults.NONE.withErrorRate(0.5).withTimeoutAfterAccept(0.5, 0);
    List<CleanupFate> fates = fates(injector(faults, 17), faults);

    assertFraction(0.5, fates, fate -> fate instanceof CleanupFate.Failed);
    assertFraction(0.25, fates, fate -> fate instanceof CleanupFate.Unanswered);
  }

  @Test
  void readsFailAtTheErrorRateAndNeverWithoutOne() {
    SimFaults faults = SimFaults.NONE.withErrorRate(0.2);
    SimFaultInjector injector = injector(faults, 19);
    List<Boolean> failures = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      failures.add(injector.readFails(faults));
    }

    assertFraction(0.2, failures, Boolean::booleanValue);
    for (int i = 0; i < CALLS; i++) {
      assertFalse(injector.readFails(SimFaults.NONE));
    }
  }

  @Test
  void theSameSeedMeetsTheSameFaults() {
    SimFaults faults =
        SimFaults.NONE.withLatency(5, 50).withErrorRate(0.3).withTimeoutAfterAccept(0.3, 9);

    assertEquals(decisions(injector(faults, 42), faults), decisions(injector(faults, 42), faults));
    assertFalse(
        decisions(injector(faults, 42), faults).equals(decisions(injector(faults, 43), faults)),
        "another seed, other faults");
  }

  @Test
  void aCallKeepsTheFaultsInForceWhenItArrived() {
    SimFaults arrival = SimFaults.NONE.withTimeoutAfterAccept(1.0, 0);
    SimFaultInjector injector = injector(arrival, 1);

    injector.setFaults(SimFaults.NONE);

    assertEquals(SimFaults.NONE, injector.faults());
    assertInstanceOf(CleanupFate.Unanswered.class, injector.cleanupFate(arrival));
    assertInstanceOf(CleanupFate.Answered.class, injector.cleanupFate(injector.faults()));
  }

  private SimFaultInjector injector(SimFaults faults, long seed) {
    return new SimFaultInjector(faults, new Random(seed), nanos::get);
  }

  private void advanceMillis(long millis) {
    nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
  }

  private static List<CleanupFate> fates(SimFaultInjector injector, SimFaults faults) {
    List<CleanupFate> fates = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      fates.add(injector.cleanupFate(faults));
    }
    return fates;
  }

  /** A call's delay and then its fate, as the server asks for them. */
  private static List<Object> decisions(SimFaultInjector injector, SimFaults faults) {
    List<Object> decisions = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      decisions.add(injector.delayMs(faults));
      decisions.add(injector.cleanupFate(faults));
    }
    return decisions;
  }

  /** Within four standard deviations of {@code expected}: a seeded run never strays that far. */
  private static <T> void assertFraction(double expected, List<T> calls, Predicate<T> fault) {
    double seen = calls.stream().filter(fault).count() / (double) calls.size();
    double tolerance = 4 * Math.sqrt(expected * (1 - expected) / calls.size());
    assertEquals(expected, seen, tolerance, "fraction of " + calls.size() + " calls");
  }
}

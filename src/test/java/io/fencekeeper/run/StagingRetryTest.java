package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The rule by which a staging waits a fault out: which faults pass, how long between tries, what
 * the run shows of a fault, and that a staging neither waits past its deadline nor retries a
 * failure that would only fail again.
 */
class StagingRetryTest {

  static SQLException state(String sqlState) {
    return new SQLException("terminating connection due to administrator command", sqlState);
  }

  @Test
  void aLostOrRefusedConnectionAServerGoingDownAndANonAnswerPass() {
    for (String passing : List.of("08006", "08001", "08003", "57P01", "57P02", "57P03", "53300")) {
      assertTrue(StagingRetry.isTransient(state(passing)), passing);
    }
    assertTrue(
        StagingRetry.isTransient(
            new IllegalStateException("could not stage", new SQLTransientConnectionException())),
        "Hikari's pool that could not hand out a connection, wrapped");
    assertTrue(StagingRetry.isTransient(new TimeoutException("the coordinator did not answer")));
  }

  @Test
  void aBrokenRuleOrAWrongQueryDoesNotPass() {
    for (String failing : List.of("23505", "42P01", "25006", "42501", "57014")) {
      assertFalse(StagingRetry.isTransient(state(failing)), failing);
    }
    assertFalse(StagingRetry.isTransient(new IllegalStateException("no cause")));
    assertFalse(StagingRetry.isTransient(new StagingLost("run")));
  }

  @Test
  void backOffDoublesFromHalfASecondToFiveSeconds() {
    List<Long> waits = new ArrayList<>();
    for (int attempt = 1; attempt <= 7; attempt++) {
      waits.add(StagingRetry.backOff(attempt).toMillis());
    }
    assertEquals(List.of(500L, 1000L, 2000L, 4000L, 5000L, 5000L, 5000L), waits);
    assertEquals(Duration.ofSeconds(5), StagingRetry.backOff(Integer.MAX_VALUE));
  }

  @Test
  void aFaultIsShownByItsSqlStateNeverItsMessage() {
    SQLException refused =
        new SQLException(
            "Connection to db.internal:5432 refused. Check that the hostname", "08001");

    String shown = StagingRetry.describe(new IllegalStateException("wrapped", refused));

    assertEquals("a database connection failed (SQLState 08001)", shown);
  }

  @Test
  void aStepIsTriedAgainAfterEachPassingFaultUntilItSucceeds() {
    List<String> noted = new ArrayList<>();
    StagingRetry retry =
        new StagingRetry(Instant.now().plus(Duration.ofMinutes(5)), Clock.systemUTC(), noted::add);
    AtomicInteger tries = new AtomicInteger();

    String done =
        retry.call(
            "commit a step",
            () -> {
              if (tries.incrementAndGet() < 3) {
                throw state("57P01");
              }
              return "committed";
            });

    assertEquals("committed", done);
    assertEquals(3, tries.get());
    assertEquals(2, noted.size());
    assertTrue(noted.get(0).startsWith("waiting to commit a step: "), noted.get(0));
  }

  @Test
  void aFailureThatWouldFailAgainAndALostClaimGoStraightToTheCaller() {
    StagingRetry retry =
        new StagingRetry(Instant.now().plus(Duration.ofMinutes(5)), Clock.systemUTC(), f -> {});
    AtomicInteger tries = new AtomicInteger();
    IllegalStateException broken = new IllegalStateException("repeat", state("23505"));
    StagingLost lost = new StagingLost("run");

    assertSame(
        broken,
        assertThrows(
            IllegalStateException.class,
            () ->
                retry.call(
                    "write",
                    () -> {
                      tries.incrementAndGet();
                      throw broken;
                    })));
    assertSame(
        lost,
        assertThrows(
            StagingLost.class,
            () ->
                retry.call(
                    "write",
                    () -> {
                      tries.incrementAndGet();
                      throw lost;
                    })));
    assertEquals(2, tries.get(), "each tried once");
  }

  @Test
  void noStagingWaitsPastItsRunsDeadline() {
    StagingRetry retry =
        new StagingRetry(Instant.now().plusMillis(200), Clock.systemUTC(), f -> {});

    StagingRetry.GaveUp gaveUp =
        assertThrows(
            StagingRetry.GaveUp.class,
            () ->
                retry.call(
                    "commit a step",
                    () -> {
                      throw state("08006");
                    }));

    assertTrue(
        gaveUp.getMessage().startsWith("could not commit a step before the run's deadline"),
        gaveUp.getMessage());
  }
}

package io.fencekeeper.provider.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.CleanupRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The sim's ledger decides, per idempotency key, what the provider protocol promises
 * (docs/provider-protocol.md): one effect per key, a replay of the first result, refusals for a key
 * in flight, a lower fencing token or a reused key with another body; and it counts what the tests
 * and the bench read as the truth about effects.
 */
class SimLedgerTest {

  private static final CleanupRequest REFUND =
      new CleanupRequest(
          "job/2026-11-29/acct-1/cur-1",
          "job",
          "2026-11-29",
          "acct-1",
          "cur-1",
          "REFUND",
          1200,
          "duplicate charge");

  private final SimLedger ledger = new SimLedger();

  @Test
  void oneKeyIsAppliedOnceAndThenReplayed() {
    assertInstanceOf(SimLedger.Admission.Admitted.class, admit("k1", 1L, REFUND));
    Receipt first = ledger.apply("k1", REFUND);
    assertEquals(Receipt.APPLIED, first.status());

    SimLedger.Admission again = admit("k1", 1L, REFUND);
    SimLedger.Admission.Replay replay = assertInstanceOf(SimLedger.Admission.Replay.class, again);
    assertEquals(first.effectId(), replay.first().effectId());
    assertEquals(Receipt.REPLAYED, replay.first().status());
    assertEquals(Map.of("k1", 1), ledger.effects(), "a replay applies nothing");
    assertEquals(Optional.of(first), ledger.lookup("k1"));
  }

  @Test
  void aKeyInFlightIsRefusedUntilItIsAppliedOrAbandoned() {
    admit("k1", 1L, REFUND);
    assertTrue(ledger.inFlight("k1"));
    assertRefused(admit("k1", 1L, REFUND), 409, HttpProtocol.KEY_IN_USE);

    ledger.abandon("k1");
    assertFalse(ledger.inFlight("k1"));
    assertInstanceOf(SimLedger.Admission.Admitted.class, admit("k1", 1L, REFUND));
    assertEquals(Map.of(), ledger.effects(), "an abandoned request applied nothing");
  }

  @Test
  void aLowerFencingTokenThanSeenIsRefusedAndNamesBothTokens() {
    admit("k1", 7L, REFUND);
    ledger.abandon("k1");
    SimLedger.Admission stale = admit("k1", 6L, REFUND);
    SimLedger.Admission.Refused refused = assertRefused(stale, 409, HttpProtocol.STALE_TOKEN);
    assertEquals(6L, refused.body().presentedToken());
    assertEquals(7L, refused.body().highestToken());
    // an equal or higher token goes ahead; without a token the fencing rule does not apply
    assertInstanceOf(SimLedger.Admission.Admitted.class, admit("k1", 7L, REFUND));
    ledger.abandon("k1");
    assertInstanceOf(SimLedger.Admission.Admitted.class, admit("k1", null, REFUND));
  }

  @Test
  void aKeyReusedWithAnotherBodyIsRefused() {
    admit("k1", 1L, REFUND);
    ledger.apply("k1", REFUND);
    CleanupRequest other =
        new CleanupRequest(
            REFUND.itemId(),
            REFUND.job(),
            REFUND.businessDate(),
            REFUND.accountId(),
            REFUND.cursor(),
            "REFUND",
            9999,
            "another amount");
    assertRefused(admit("k1", 1L, other), 422, HttpProtocol.KEY_REUSED);
    assertEquals(Map.of("k1", 1), ledger.effects());
  }

  @Test
  void theFaultModesTurnTheRulesOff() {
    SimFaults careless = SimFaults.NONE.withNonIdempotent(true).withIgnoreFencing(true);
    assertInstanceOf(SimLedger.Admission.Admitted.class, ledger.admit("k1", 5L, REFUND, careless));
    assertInstanceOf(
        SimLedger.Admission.Admitted.class,
        ledger.admit("k1", 1L, REFUND, careless),
        "in flight and a lower token: both ignored");
    ledger.apply("k1", REFUND);
    ledger.apply("k1", REFUND);
    assertEquals(Map.of("k1", 2), ledger.effects(), "a non-idempotent provider applies twice");
  }

  @Test
  void concurrentRequestsWithOneKeyAdmitExactlyOne() throws Exception {
    int callers = 16;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<SimLedger.Admission>> answers = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        answers.add(
            pool.submit(
                () -> {
                  start.await();
                  return admit("k1", 1L, REFUND);
                }));
      }
      start.countDown();
      int admitted = 0;
      for (Future<SimLedger.Admission> answer : answers) {
        if (answer.get(10, TimeUnit.SECONDS) instanceof SimLedger.Admission.Admitted) {
          admitted++;
        }
      }
      assertEquals(1, admitted);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void discrepanciesOnPurposeChangeWhatLookupsAndEffectsSay() {
    admit("k1", 1L, REFUND);
    ledger.apply("k1", REFUND);
    assertTrue(ledger.lose("k1"));
    assertEquals(Optional.empty(), ledger.lookup("k1"), "a lost effect is not found");
    assertEquals(Map.of(), ledger.effects());
    assertFalse(ledger.lose("k1"), "nothing left to lose");
    assertFalse(ledger.lose("never-seen"));

    Receipt foreign = ledger.writeForeign("k2");
    assertEquals(Optional.of(foreign), ledger.lookup("k2"));
    assertRefused(admit("k2", 1L, REFUND), 422, HttpProtocol.KEY_REUSED);
    assertEquals(Map.of("k2", 1), ledger.effects());
    assertEquals(Map.of("k1", 1L, "k2", 1L), ledger.lookups(), "every lookup is counted");
  }

  @Test
  void resetForgetsEverything() {
    ledger.countRequest();
    admit("k1", 3L, REFUND);
    ledger.apply("k1", REFUND);
    ledger.lookup("k1");
    ledger.reset();
    assertEquals(0, ledger.requests());
    assertEquals(Map.of(), ledger.effects());
    assertEquals(Map.of(), ledger.lookups());
    assertInstanceOf(
        SimLedger.Admission.Admitted.class, admit("k1", 1L, REFUND), "the old token is forgotten");
  }

  private SimLedger.Admission admit(String key, Long token, CleanupRequest request) {
    return ledger.admit(key, token, request, SimFaults.NONE);
  }

  private static SimLedger.Admission.Refused assertRefused(
      SimLedger.Admission admission, int status, String error) {
    SimLedger.Admission.Refused refused =
        assertInstanceOf(SimLedger.Admission.Refused.class, admission);
    assertEquals(status, refused.status());
    assertEquals(error, refused.body().error());
    return refused;
  }
}

package io.fencekeeper.provider.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.CleanupRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
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
 * (docs/provider-protocol.md): one effect per key, a replay of the first result (by the effect's
 * identity in 1.1, by the whole body in 1.0), refusals for a key in flight, a lower fencing token
 * (before anything else) or a reused key with another effect; and it counts what the tests and the
 * bench read as the truth about effects.
 */
class SimLedgerTest {

  private static final CleanupRequest REFUND_BODY =
      new CleanupRequest(
          "job/2026-11-29/acct-1/cur-1",
          "job",
          "2026-11-29",
          "acct-1",
          "cur-1",
          "REFUND",
          1200,
          "duplicate charge",
          null);

  private static final SimLedger.Request REFUND = request(REFUND_BODY);

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
    // an equal or higher token goes ahead
    assertInstanceOf(SimLedger.Admission.Admitted.class, admit("k1", 7L, REFUND));
  }

  /** Order of checks, step 3 before 4 and 5: a stale caller is told to stop, not to retry. */
  @Test
  void aStaleTokenIsRefusedEvenWhileTheKeyIsInFlightOrApplied() {
    admit("k1", 5L, REFUND);
    assertTrue(ledger.inFlight("k1"));

    assertRefused(admit("k1", 4L, REFUND), 409, HttpProtocol.STALE_TOKEN);
    ledger.apply("k1", REFUND);
    assertRefused(admit("k1", 4L, REFUND), 409, HttpProtocol.STALE_TOKEN);
    assertInstanceOf(SimLedger.Admission.Replay.class, admit("k1", 5L, REFUND));
  }

  /** A request that passes the fencing check raises the mark, whatever then becomes of it. */
  @Test
  void theMarkStaysRaisedByARequestThatWasThenRefused() {
    admit("k1", 1L, REFUND);
    // key_in_use for token 3: refused, yet it passed the fencing check
    assertRefused(admit("k1", 3L, REFUND), 409, HttpProtocol.KEY_IN_USE);
    ledger.apply("k1", REFUND);
    // key_reused for token 4: refused, yet it raised the mark too
    assertRefused(admit("k1", 4L, amount(REFUND_BODY, 9999)), 422, HttpProtocol.KEY_REUSED);

    SimLedger.Admission.Refused stale =
        assertRefused(admit("k1", 3L, REFUND), 409, HttpProtocol.STALE_TOKEN);
    assertEquals(4L, stale.body().highestToken());
  }

  @Test
  void aKeyReusedForAnotherEffectIsRefusedButOtherFieldsDoNotCount() {
    admit("k1", 1L, REFUND);
    ledger.apply("k1", REFUND);
    CleanupRequest described =
        new CleanupRequest(
            REFUND_BODY.itemId(),
            null, // the parts may be left out (when sent, they must be the itemId's: a 400)
            null,
            null,
            null,
            REFUND_BODY.action(),
            REFUND_BODY.amountMinor(),
            "described anew",
            null);

    assertRefused(admit("k1", 1L, amount(REFUND_BODY, 9999)), 422, HttpProtocol.KEY_REUSED);
    assertInstanceOf(
        SimLedger.Admission.Replay.class,
        admit("k1", 1L, request(described)),
        "the parts left out and a new description are the same effect");
    assertInstanceOf(
        SimLedger.Admission.Replay.class,
        admit("k1", 1L, request("{\"unknown\": [1, 2]}", REFUND_BODY)),
        "a field the server does not know is ignored");
    assertEquals(Map.of("k1", 1), ledger.effects());
  }

  /** Currency is compared only when both carry one: a 1.0 body has none. */
  @Test
  void aCurrencyCountsOnlyWhenBothBodiesCarryOne() {
    admit("k1", 1L, REFUND);
    ledger.apply("k1", REFUND);
    assertInstanceOf(
        SimLedger.Admission.Replay.class, admit("k1", 1L, currency(REFUND_BODY, "EUR")));

    SimLedger.Request inEuro = currency(REFUND_BODY, "EUR");
    admit("k2", 1L, inEuro);
    ledger.apply("k2", inEuro);
    assertInstanceOf(SimLedger.Admission.Replay.class, admit("k2", 1L, REFUND));
    assertInstanceOf(
        SimLedger.Admission.Replay.class, admit("k2", 1L, currency(REFUND_BODY, "EUR")));
    assertRefused(admit("k2", 1L, currency(REFUND_BODY, "USD")), 422, HttpProtocol.KEY_REUSED);
  }

  /** As a 1.0 server: every field of the body counts, description and unknown fields included. */
  @Test
  void asA10ServerTheWholeBodyCounts() {
    admit10("k1", REFUND);
    ledger.apply("k1", REFUND);

    assertInstanceOf(SimLedger.Admission.Replay.class, admit10("k1", request(REFUND_BODY)));
    assertRefused(
        admit10("k1", request("{\"unknown\": 1}", REFUND_BODY)), 422, HttpProtocol.KEY_REUSED);
    assertRefused(admit10("k1", currency(REFUND_BODY, "EUR")), 422, HttpProtocol.KEY_REUSED);
  }

  @Test
  void theFaultModesTurnTheRulesOff() {
    SimFaults careless = SimFaults.NONE.withNonIdempotent(true).withIgnoreFencing(true);
    assertInstanceOf(
        SimLedger.Admission.Admitted.class,
        ledger.admit("k1", 5L, REFUND, careless, SimProtocol.V1_1));
    assertInstanceOf(
        SimLedger.Admission.Admitted.class,
        ledger.admit("k1", 1L, REFUND, careless, SimProtocol.V1_1),
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

  private SimLedger.Admission admit(String key, long token, SimLedger.Request request) {
    return ledger.admit(key, token, request, SimFaults.NONE, SimProtocol.V1_1);
  }

  private SimLedger.Admission admit10(String key, SimLedger.Request request) {
    return ledger.admit(key, 1L, request, SimFaults.NONE, SimProtocol.V1_0);
  }

  /** The body as the sim reads it off the wire. */
  static SimLedger.Request request(CleanupRequest body) {
    try {
      return SimRoutes.cleanupBody(HttpProtocol.json().writeValueAsBytes(body));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code body} with the fields of {@code extra} (a JSON object) added. */
  static SimLedger.Request request(String extra, CleanupRequest body) {
    try {
      ObjectNode tree = HttpProtocol.json().valueToTree(body);
      tree.setAll((ObjectNode) HttpProtocol.json().readTree(extra));
      return SimRoutes.cleanupBody(HttpProtocol.json().writeValueAsBytes(tree));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static SimLedger.Request amount(CleanupRequest body, long amountMinor) {
    return request(changed(body, amountMinor, body.currency()));
  }

  private static SimLedger.Request currency(CleanupRequest body, String currency) {
    return request(changed(body, body.amountMinor(), currency));
  }

  private static CleanupRequest changed(CleanupRequest body, long amountMinor, String currency) {
    return new CleanupRequest(
        body.itemId(),
        body.job(),
        body.businessDate(),
        body.accountId(),
        body.cursor(),
        body.action(),
        amountMinor,
        body.description(),
        currency);
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

package io.fencekeeper.provider.sim;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.provider.EffectIdentity;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.ErrorBody;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the simulated provider has done, per idempotency key: how often the cleanup was really
 * applied, the first result (for replays and lookups) and the body it was applied with, the highest
 * fencing token seen, and whether a request with the key is being processed right now.
 *
 * <p>Every decision about one key happens while holding that key's state, so two concurrent
 * requests with the same key can never both be admitted. The fencing scope is the key (the sim
 * knows nothing of items).
 */
final class SimLedger {

  /**
   * A cleanup as the ledger compares it: the effect's identity (what 1.1 compares) and the whole
   * body (what a 1.0 server compares).
   */
  record Request(EffectIdentity identity, JsonNode body) {}

  /** What to do with a cleanup request, decided atomically for its key. */
  sealed interface Admission {
    /** Go ahead: the key is now in flight until {@link #apply} or {@link #abandon}. */
    record Admitted() implements Admission {}

    /** Same key, same effect, already applied: answer the first result, apply nothing. */
    record Replay(Receipt first) implements Admission {}

    record Refused(int status, ErrorBody body) implements Admission {}
  }

  private static final class KeyState {
    long highestToken = Long.MIN_VALUE;
    boolean inFlight;
    int applied;
    Request firstRequest;
    Receipt firstOutcome;
  }

  private final ConcurrentHashMap<String, KeyState> keys = new ConcurrentHashMap<>();
  // GET /v1/cleanups/{key} answered per key: how often a verification asked
  // (docs/provider-protocol.md)
  private final ConcurrentHashMap<String, AtomicLong> lookups = new ConcurrentHashMap<>();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong effectSequence = new AtomicLong();

  void countRequest() {
    requests.incrementAndGet();
  }

  /**
   * Steps 3 to 5 of docs/provider-protocol.md, "Order of checks", atomically for the key: the
   * fencing check (a lower token than the key's mark is refused even while the key is in flight or
   * applied; otherwise the mark rises, and stays risen whatever becomes of the request), the key in
   * flight, and the stored effect (the same effect replays, another is {@code key_reused}). {@code
   * protocol} says what "the same" is: the identity in 1.1, the whole body in 1.0.
   */
  Admission admit(
      String key, long fencingToken, Request request, SimFaults faults, SimProtocol protocol) {
    KeyState state = keys.computeIfAbsent(key, k -> new KeyState());
    synchronized (state) {
      if (!faults.ignoreFencing()) {
        if (fencingToken < state.highestToken) {
          // the fencing rule: a lower token than already seen is a caller that lost its lease
          return new Admission.Refused(
              409,
              new ErrorBody(
                  HttpProtocol.STALE_TOKEN,
                  "Fencing-Token "
                      + fencingToken
                      + " is lower than "
                      + state.highestToken
                      + ", already seen for this key",
                  fencingToken,
                  state.highestToken));
        }
        state.highestToken = fencingToken;
      }
      if (!faults.nonIdempotent() && state.inFlight) {
        return new Admission.Refused(
            409,
            ErrorBody.of(
                HttpProtocol.KEY_IN_USE,
                "a request with this Idempotency-Key is still being processed; retry later"));
      }
      if (!faults.nonIdempotent() && state.firstOutcome != null) {
        if (!sameEffect(state.firstRequest, request, protocol)) {
          return new Admission.Refused(
              422,
              ErrorBody.of(
                  HttpProtocol.KEY_REUSED,
                  protocol == SimProtocol.V1_0
                      ? "this Idempotency-Key was first used with a different request body"
                      : "this Idempotency-Key was first used for a different effect"
                          + differences(state.firstRequest, request)));
        }
        return new Admission.Replay(state.firstOutcome.asReplay());
      }
      state.inFlight = true;
      return new Admission.Admitted();
    }
  }

  /** Null {@code first}: an effect written without Fencekeeper, which nothing it sends matches. */
  private static boolean sameEffect(Request first, Request again, SimProtocol protocol) {
    if (first == null) {
      return false;
    }
    return protocol == SimProtocol.V1_0
        ? first.body().equals(again.body())
        : again.identity().sameEffect(first.identity());
  }

  private static String differences(Request first, Request again) {
    return first == null
        ? " (an effect written under it without Fencekeeper)"
        : " (" + again.identity().differenceFrom(first.identity()) + " differ)";
  }

  /** Really applies the cleanup: the one place that counts an effect. */
  Receipt apply(String key, Request request) {
    KeyState state = keys.computeIfAbsent(key, k -> new KeyState());
    synchronized (state) {
      Receipt outcome = newEffect(key);
      state.applied++;
      if (state.firstOutcome == null) {
        state.firstOutcome = outcome;
        state.firstRequest = request;
      }
      state.inFlight = false;
      return outcome;
    }
  }

  private Receipt newEffect(String key) {
    return new Receipt(
        key,
        "sim-eff-" + effectSequence.incrementAndGet(),
        Receipt.APPLIED,
        Instant.now().truncatedTo(ChronoUnit.MILLIS));
  }

  /** The request failed before applying anything: the key may be used again at once. */
  void abandon(String key) {
    KeyState state = keys.get(key);
    if (state != null) {
      synchronized (state) {
        state.inFlight = false;
      }
    }
  }

  /**
   * The first effect recorded under this reference. Works in non-idempotent mode too, the way one
   * searches a provider's metadata field for the caller's reference.
   */
  Optional<Receipt> lookup(String key) {
    lookups.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
    KeyState state = keys.get(key);
    if (state == null) {
      return Optional.empty();
    }
    synchronized (state) {
      return Optional.ofNullable(state.firstOutcome);
    }
  }

  /**
   * A discrepancy on purpose: the effect under this key is lost, as if the provider's ledger lost a
   * row. Lookups answer 404 from now on, and {@link #effects()} no longer counts it; the fencing
   * high-water mark stays. False when no effect was under the key.
   */
  boolean lose(String key) {
    KeyState state = keys.get(key);
    if (state == null) {
      return false;
    }
    synchronized (state) {
      if (state.firstOutcome == null) {
        return false;
      }
      state.firstOutcome = null;
      state.firstRequest = null;
      state.applied = 0;
      return true;
    }
  }

  /**
   * A discrepancy on purpose: another system writes an effect under this key, without Fencekeeper
   * knowing. It becomes the effect lookups answer (replacing one Fencekeeper applied, if any) and
   * counts as one more application.
   */
  Receipt writeForeign(String key) {
    KeyState state = keys.computeIfAbsent(key, k -> new KeyState());
    synchronized (state) {
      Receipt outcome = newEffect(key);
      state.applied++;
      state.firstOutcome = outcome;
      // a cleanup Fencekeeper sends later under the key is a different request: 422 key_reused
      state.firstRequest = null;
      return outcome;
    }
  }

  /** Lookups answered per key (200 or 404); keys never looked up are left out. */
  Map<String, Long> lookups() {
    Map<String, Long> counts = new TreeMap<>();
    lookups.forEach((key, count) -> counts.put(key, count.get()));
    return counts;
  }

  boolean inFlight(String key) {
    KeyState state = keys.get(key);
    if (state == null) {
      return false;
    }
    synchronized (state) {
      return state.inFlight;
    }
  }

  /** Effects actually applied per key; keys that never had an effect are left out. */
  Map<String, Integer> effects() {
    Map<String, Integer> effects = new TreeMap<>();
    keys.forEach(
        (key, state) -> {
          synchronized (state) {
            if (state.applied > 0) {
              effects.put(key, state.applied);
            }
          }
        });
    return effects;
  }

  long requests() {
    return requests.get();
  }

  void reset() {
    keys.clear();
    lookups.clear();
    requests.set(0);
  }
}

package io.fencekeeper.provider.sim;

import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProtocol.CleanupRequest;
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
 * applied, the first result (for replays and lookups), the highest fencing token seen, and whether
 * a request with the key is being processed right now.
 *
 * <p>Every decision about one key happens while holding that key's state, so two concurrent
 * requests with the same key can never both be admitted.
 */
final class SimLedger {

  /** What to do with a cleanup request, decided atomically for its key. */
  sealed interface Admission {
    /** Go ahead: the key is now in flight until {@link #apply} or {@link #abandon}. */
    record Admitted() implements Admission {}

    /** Same key, same body, already applied: answer the first result, apply nothing. */
    record Replay(Receipt first) implements Admission {}

    record Refused(int status, ErrorBody body) implements Admission {}
  }

  private static final class KeyState {
    long highestToken = Long.MIN_VALUE;
    boolean inFlight;
    int applied;
    CleanupRequest firstRequest;
    Receipt firstOutcome;
  }

  private final ConcurrentHashMap<String, KeyState> keys = new ConcurrentHashMap<>();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong effectSequence = new AtomicLong();

  void countRequest() {
    requests.incrementAndGet();
  }

  Admission admit(String key, Long fencingToken, CleanupRequest request, SimFaults faults) {
    KeyState state = keys.computeIfAbsent(key, k -> new KeyState());
    synchronized (state) {
      if (!faults.nonIdempotent() && state.inFlight) {
        return new Admission.Refused(
            409,
            ErrorBody.of(
                HttpProtocol.KEY_IN_USE,
                "a request with this Idempotency-Key is still being processed; retry later"));
      }
      if (!faults.ignoreFencing() && fencingToken != null) {
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
      if (!faults.nonIdempotent() && state.firstOutcome != null) {
        if (!state.firstRequest.equals(request)) {
          return new Admission.Refused(
              422,
              ErrorBody.of(
                  HttpProtocol.KEY_REUSED,
                  "this Idempotency-Key was first used with a different request body"));
        }
        return new Admission.Replay(state.firstOutcome.asReplay());
      }
      state.inFlight = true;
      return new Admission.Admitted();
    }
  }

  /** Really applies the cleanup: the one place that counts an effect. */
  Receipt apply(String key, CleanupRequest request) {
    KeyState state = keys.computeIfAbsent(key, k -> new KeyState());
    synchronized (state) {
      Receipt outcome =
          new Receipt(
              key,
              "sim-eff-" + effectSequence.incrementAndGet(),
              Receipt.APPLIED,
              Instant.now().truncatedTo(ChronoUnit.MILLIS));
      state.applied++;
      if (state.firstOutcome == null) {
        state.firstOutcome = outcome;
        state.firstRequest = request;
      }
      state.inFlight = false;
      return outcome;
    }
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
    KeyState state = keys.get(key);
    if (state == null) {
      return Optional.empty();
    }
    synchronized (state) {
      return Optional.ofNullable(state.firstOutcome);
    }
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
    requests.set(0);
  }
}

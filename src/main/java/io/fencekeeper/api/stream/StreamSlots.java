package io.fencekeeper.api.stream;

import io.fencekeeper.api.http.ApiError;
import java.util.HashMap;
import java.util.Map;

/**
 * The live streams one node serves (docs/security.md, "Live streams"): at most {@code max} in all,
 * at most {@code perToken} opened with one token (the read token cannot hold every slot: the API
 * token keeps the rest), and at most {@code perAddress} from one remote address (one machine cannot
 * hold them all either). A slot is reserved when a stream is asked for and comes back exactly once,
 * however the stream ends: when it ends after it started, when its start fails, or when it never
 * starts because the client went away before the answer was sent ({@link Slot#releaseIfUnstarted}).
 */
public final class StreamSlots {

  private final int max;
  private final int perToken;
  private final int perAddress;
  private final Map<String, Integer> byToken = new HashMap<>();
  private final Map<String, Integer> byAddress = new HashMap<>();
  private int open;

  /**
   * @param perToken 0: no cap per token
   * @param perAddress 0: no cap per remote address (a node behind a proxy that caps per client)
   */
  public StreamSlots(int max, int perToken, int perAddress) {
    if (max < 1 || perToken < 0 || perAddress < 0) {
      throw new IllegalArgumentException(
          "fencekeeper.http.max-event-streams must be at least 1, its per-token and per-address"
              + " caps at least 0");
    }
    this.max = max;
    this.perToken = perToken == 0 ? max : Math.min(perToken, max);
    this.perAddress = perAddress == 0 ? max : Math.min(perAddress, max);
  }

  /**
   * A slot for one stream of {@code token} (the caller's role: one per token) from {@code address},
   * or 503 {@code too_many_streams} saying which cap is reached.
   */
  synchronized Slot reserve(String token, String address) {
    if (open >= max) {
      throw refused(
          "this node already serves " + max + " live streams (fencekeeper.http.max-event-streams)");
    }
    if (byToken.getOrDefault(token, 0) >= perToken) {
      throw refused(
          "this token already holds "
              + perToken
              + " of the node's live streams (fencekeeper.http.max-event-streams-per-token)");
    }
    if (byAddress.getOrDefault(address, 0) >= perAddress) {
      throw refused(
          "your address already holds "
              + perAddress
              + " of the node's live streams (fencekeeper.http.max-event-streams-per-address)");
    }
    open++;
    byToken.merge(token, 1, Integer::sum);
    byAddress.merge(address, 1, Integer::sum);
    return new Slot(token, address);
  }

  private static ApiError refused(String why) {
    return new ApiError(
        503,
        "too_many_streams",
        why + "; close another stream, retry later, ask another node, or poll GET /api/runs");
  }

  synchronized int open() {
    return open;
  }

  private synchronized void free(Slot slot) {
    open--;
    byToken.computeIfPresent(slot.token, (k, n) -> n == 1 ? null : n - 1);
    byAddress.computeIfPresent(slot.address, (k, n) -> n == 1 ? null : n - 1);
  }

  /** One reserved stream: reserved, then started, then released; released exactly once. */
  final class Slot {
    private final String token;
    private final String address;
    private boolean started;
    private boolean released;

    private Slot(String token, String address) {
      this.token = token;
      this.address = address;
    }

    /**
     * The stream is running; false when its slot was already given back (it started too late, or
     * the node is closing), and then the stream must end at once.
     */
    synchronized boolean start() {
      if (released) {
        return false;
      }
      started = true;
      return true;
    }

    /** Gives the slot back unless it was given back already. */
    void release() {
      synchronized (this) {
        if (released) {
          return;
        }
        released = true;
      }
      free(this);
    }

    /**
     * For a stream whose answer was made but whose body never started: the client reset the
     * connection before pekko wrote the answer, so nothing will ever end the stream.
     */
    void releaseIfUnstarted() {
      synchronized (this) {
        if (started || released) {
          return;
        }
        released = true;
      }
      free(this);
    }
  }
}

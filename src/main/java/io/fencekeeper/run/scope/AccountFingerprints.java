package io.fencekeeper.run.scope;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * The accounts seen so far in one scope read, for duplicate detection without holding the accounts:
 * a 128-bit fingerprint (the first half of SHA-256 of {@code accountId \n cursor}) and the position
 * where it was first seen, in open-addressed primitive arrays. About 50 bytes per account at the
 * table's load factor, against ~200 for a set of strings; at 128 bits a false "duplicate" is not a
 * practical concern.
 */
final class AccountFingerprints {

  private final MessageDigest sha256 = ScopeDigests.sha256();
  private long[] high = new long[1024];
  private long[] low = new long[1024];
  private long[] position = new long[1024]; // position + 1; 0 marks an empty slot
  private int size;

  /** Remembers the account at {@code where}; answers the earlier position of an equal one or -1. */
  long firstSeenAt(String accountId, String cursor, long where) {
    sha256.update(accountId.getBytes(StandardCharsets.UTF_8));
    sha256.update((byte) '\n');
    byte[] hash = sha256.digest(cursor.getBytes(StandardCharsets.UTF_8));
    long h = toLong(hash, 0);
    long l = toLong(hash, 8);
    int mask = high.length - 1;
    int slot = (int) l & mask;
    while (position[slot] != 0) {
      if (high[slot] == h && low[slot] == l) {
        return position[slot] - 1;
      }
      slot = (slot + 1) & mask;
    }
    high[slot] = h;
    low[slot] = l;
    position[slot] = where + 1;
    if (++size * 4L > high.length * 3L) {
      grow();
    }
    return -1;
  }

  private void grow() {
    long[] oldHigh = high;
    long[] oldLow = low;
    long[] oldPosition = position;
    high = new long[oldHigh.length * 2];
    low = new long[oldHigh.length * 2];
    position = new long[oldHigh.length * 2];
    int mask = high.length - 1;
    for (int i = 0; i < oldHigh.length; i++) {
      if (oldPosition[i] != 0) {
        int slot = (int) oldLow[i] & mask;
        while (position[slot] != 0) {
          slot = (slot + 1) & mask;
        }
        high[slot] = oldHigh[i];
        low[slot] = oldLow[i];
        position[slot] = oldPosition[i];
      }
    }
  }

  private static long toLong(byte[] bytes, int offset) {
    long value = 0;
    for (int i = offset; i < offset + 8; i++) {
      value = (value << 8) | (bytes[i] & 0xff);
    }
    return value;
  }
}

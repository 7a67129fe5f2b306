package io.fencekeeper.bench.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * One night of the soak as the script made it: its run, the CSV it uploaded (header {@code
 * accountId,cursor}) and when the script first saw the run ended, by the script's own clock (no
 * node's: those the soak moves).
 */
record Night(int number, String runId, Path csv, Instant endSeen) {

  /** A line of the script's nights file: number, run id, CSV path, end seen (epoch ms, 0: never). */
  static Night parse(String line) {
    String[] fields = line.split("\t");
    if (fields.length != 4) {
      throw new IllegalArgumentException("a nights line has 4 tab-separated fields: " + line);
    }
    long seen = Long.parseLong(fields[3]);
    return new Night(
        Integer.parseInt(fields[0]),
        fields[1],
        Path.of(fields[2]),
        seen == 0 ? null : Instant.ofEpochMilli(seen));
  }

  /** The run's item ids ({@code job/date/account/cursor}), in the CSV's order. */
  List<String> itemIds() throws IOException {
    List<String> ids = new ArrayList<>();
    try (var lines = Files.lines(csv, StandardCharsets.UTF_8)) {
      lines
          .skip(1)
          .filter(line -> !line.isBlank())
          .forEach(
              line -> {
                String[] columns = line.split(",", -1);
                ids.add(runId + "/" + columns[0].trim() + "/" + columns[1].trim());
              });
    }
    return ids;
  }

  /**
   * The idempotency key the provider sees for an item: {@code fk-} and 32 hex digits
   * (docs/provider-protocol.md), the first 16 bytes of the SHA-256 of the item's id. Derived here
   * again rather than by the product's code: a key the product derived otherwise would show as
   * DONE items without their effect.
   */
  static String idempotencyKey(String itemId) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(itemId.getBytes(StandardCharsets.UTF_8));
      return "fk-" + HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.LocalDate;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Item ids are read by hand, not by regex and formatter (a node checks one on every hop): the hand
 * checks accept exactly what the documented rules accept, and the key stays what providers hold.
 */
class ItemIdTest {

  /** The documented segment rule, as the regex it once was. */
  private static final Pattern RULE = Pattern.compile("[A-Za-z0-9._:@+=-]{1,128}");

  @Test
  void segmentsAreAcceptedExactlyAsTheRuleSays() {
    List<String> samples =
        List.of(
            "acct-00001",
            "cur-1",
            "a.b_c:d@e+f=g-h",
            "Z9",
            "x".repeat(128),
            "x".repeat(129),
            "",
            "a/b",
            "a b",
            "a\tb",
            "a\u0000b",
            "é",
            "a%2Fb",
            "a?b",
            "a#b",
            "[a]",
            "a,b");
    for (String sample : samples) {
      assertEquals(RULE.matcher(sample).matches(), ItemId.isSegment(sample), sample);
    }
    // every single ASCII character and a few beyond it
    for (char c = 0; c < 0x300; c++) {
      String one = String.valueOf(c);
      assertEquals(RULE.matcher(one).matches(), ItemId.isSegment(one), "char " + (int) c);
    }
    assertFalse(ItemId.isSegment(null));
  }

  @Test
  void parseReadsTheFourPartsAndRefusesImpossibleDates() {
    ItemId id = ItemId.parse("pay-recon/2026-11-29/acct-00001/cur-1");
    assertEquals(new ItemId("pay-recon", LocalDate.of(2026, 11, 29), "acct-00001", "cur-1"), id);
    assertEquals("pay-recon/2026-11-29/acct-00001/cur-1", id.value());
    for (String date :
        List.of(
            "2026-02-30",
            "2026-13-01",
            "2026-00-10",
            "2026-1-01",
            "20260101",
            "2026-01-0x",
            "+2026-01-01x",
            "")) {
      IllegalArgumentException refused =
          assertThrows(
              IllegalArgumentException.class, () -> ItemId.parse("j/" + date + "/a/c"), date);
      assertEquals(
          "itemId has an invalid businessDate (expected yyyy-MM-dd)", refused.getMessage());
    }
    // a leap day, and the years the formatter reads beyond four digits
    assertEquals(LocalDate.of(2028, 2, 29), ItemId.parse("j/2028-02-29/a/c").businessDate());
    assertEquals(LocalDate.of(12026, 1, 1), ItemId.parse("j/+12026-01-01/a/c").businessDate());
    IllegalArgumentException badSegment =
        assertThrows(IllegalArgumentException.class, () -> ItemId.parse("j/2026-11-29/a b/c"));
    assertEquals("accountId must be " + ItemId.SEGMENT_RULE, badSegment.getMessage());
  }

  @Test
  void theIdempotencyKeyIsTheFirstHalfOfTheIdsSha256() throws Exception {
    ItemId id = ItemId.parse("pay-recon/2026-11-29/acct-00001/cur-1");
    byte[] digest =
        MessageDigest.getInstance("SHA-256").digest(id.value().getBytes(StandardCharsets.UTF_8));
    String expected = "fk-" + HexFormat.of().formatHex(digest, 0, 16);
    assertEquals(expected, id.idempotencyKey());
    assertEquals(expected, id.idempotencyKey(), "the same key every time");
    assertTrue(id.idempotencyKey().matches("fk-[0-9a-f]{32}"));
  }
}

package io.fencekeeper.api.http;

import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;

/**
 * Free text as exports and terminals show it (docs/security.md, "What reaches an export"). Text a
 * caller or provider chose (an error, a reason, a provider reference, a worker id journaled before
 * the API refused control characters in it) may hold characters a terminal or a spreadsheet acts
 * on: C0 and C1 controls (ESC starts a terminal escape sequence, a line break forges a line), DEL,
 * the line and paragraph separators, and the bidirectional controls that make text read other than
 * it is stored. They are never passed on raw: JSON writes them as {@code \\uXXXX} escapes (the
 * value a JSON reader gets is unchanged), CSV and plain text as the same six visible characters.
 */
public final class PrintableText {

  private PrintableText() {}

  /** Whether {@code codePoint} acts on a terminal or on how text reads, rather than showing. */
  static boolean acts(int codePoint) {
    return Character.getType(codePoint) == Character.CONTROL // C0, DEL, C1
        || codePoint == 0x2028 // line separator
        || codePoint == 0x2029 // paragraph separator
        || codePoint == 0x061C // Arabic letter mark
        || codePoint == 0x200E // left-to-right mark
        || codePoint == 0x200F // right-to-left mark
        || (codePoint >= 0x202A && codePoint <= 0x202E) // embeddings and overrides
        || (codePoint >= 0x2066 && codePoint <= 0x2069); // isolates
  }

  /** Whether {@code text} holds no character that {@link #acts}. */
  public static boolean isPrintable(String text) {
    return text.codePoints().noneMatch(PrintableText::acts);
  }

  /** {@code text} with every character that {@link #acts} written as {@code \\uXXXX}. */
  public static String escape(String text) {
    if (text == null || isPrintable(text)) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length() + 16);
    text.codePoints()
        .forEach(
            c -> {
              if (acts(c)) {
                out.append(String.format("\\u%04x", c));
              } else {
                out.appendCodePoint(c);
              }
            });
    return out.toString();
  }

  /**
   * For a JSON writer: Jackson escapes C0 controls already; these escapes add DEL, C1 and the
   * separators and bidirectional controls, as JSON escapes.
   */
  public static CharacterEscapes jsonEscapes() {
    return JSON_ESCAPES;
  }

  private static final CharacterEscapes JSON_ESCAPES =
      new CharacterEscapes() {
        private final int[] ascii = asciiEscapes();

        private static int[] asciiEscapes() {
          int[] codes = CharacterEscapes.standardAsciiEscapesForJSON();
          codes[0x7F] = CharacterEscapes.ESCAPE_STANDARD;
          return codes;
        }

        @Override
        public int[] getEscapeCodesForAscii() {
          return ascii;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
          return acts(ch) ? new SerializedString(String.format("\\u%04x", ch)) : null;
        }
      };
}
